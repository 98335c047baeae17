"use client";

import { ENGINES, ModelSource } from "@thaw/core/schemas";
import { GigabytesField, SelectField, TextField } from "./wizard-field.tsx";

const ENGINE_OPTIONS = ENGINES.map((engine) => ({ value: engine, label: engine }));

/** Step 2: where the weights come from, how large they are, and the engine that serves them. */
export function ModelStep() {
  return (
    <>
      <TextField
        name="deployment.modelSource"
        label="Model source"
        hint={ModelSource.meta()?.description}
      />
      <GigabytesField name="deployment.modelBytes" label="Model size (GB)" />
      <TextField name="deployment.modelFormat" label="Model format" />
      <SelectField name="deployment.engine" label="Engine" options={ENGINE_OPTIONS} />
    </>
  );
}
