"use client";

import { GigabytesField, TextField } from "./wizard-field.tsx";

/**
 * Step 1: the image. Its digest, size, layers and eStargz variant are read from the registry
 * (the review step shows what was found); the other fields override what it says.
 */
export function ImageStep() {
  return (
    <>
      <TextField
        name="deployment.imageRef"
        label="Image reference"
        hint="Digest, size, layers and an eStargz variant (<tag>-esgz) are read from the registry."
      />
      <TextField
        name="deployment.imageDigest"
        label="Image digest (optional)"
        hint="Pins the image; without it, the digest the registry resolves the reference to."
        optional
      />
      <GigabytesField name="deployment.imageBytes" label="Image size in GB (optional override)" />
      <TextField
        name="deployment.estargzImageRef"
        label="eStargz image reference (optional)"
        hint="A seekable variant of the same image enables the lazy start path; without it, the registry's <tag>-esgz if its layers are eStargz."
        optional
      />
      <TextField name="deployment.estargzDigest" label="eStargz digest (optional)" optional />
    </>
  );
}
