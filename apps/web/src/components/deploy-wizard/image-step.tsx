"use client";

import { GigabytesField, TextField } from "./wizard-field.tsx";

/** Step 1: the image, its size, and the seekable eStargz variant that enables the lazy path. */
export function ImageStep() {
  return (
    <>
      <TextField name="deployment.imageRef" label="Image reference" />
      <TextField
        name="deployment.imageDigest"
        label="Image digest (optional)"
        hint="Pins the image; without it the reference is the identity."
        optional
      />
      <GigabytesField name="deployment.imageBytes" label="Image size (GB)" />
      <TextField
        name="deployment.estargzImageRef"
        label="eStargz image reference (optional)"
        hint="A seekable variant of the same image enables the lazy start path."
        optional
      />
      <TextField name="deployment.estargzDigest" label="eStargz digest (optional)" optional />
    </>
  );
}
