"use client";

import { ENGINES, ModelSource } from "@thaw/core/schemas";
import { GigabytesField, SelectField, TextField } from "./wizard-field.tsx";

const ENGINE_OPTIONS = ENGINES.map((engine) => ({ value: engine, label: engine }));

/**
 * Step 2: where the weights come from and the engine that serves them. Their size and format
 * are read from the source (the Hugging Face Hub, S3, an https HEAD); both fields override it.
 */
export function ModelStep() {
  return (
    <>
      <TextField
        name="deployment.modelSource"
        label="Model source"
        hint={ModelSource.meta()?.description}
      />
      <SelectField name="deployment.engine" label="Engine" options={ENGINE_OPTIONS} />
      <GigabytesField name="deployment.modelBytes" label="Model size in GB (optional override)" />
      <TextField
        name="deployment.modelFormat"
        label="Model format (optional)"
        hint="safetensors, gguf, pytorch…; without it, detected from the source's files."
        optional
      />
    </>
  );
}
