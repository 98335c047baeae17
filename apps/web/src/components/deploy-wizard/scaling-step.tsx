"use client";

import { CreateEndpointInput } from "@thaw/core/schemas";
import { NumberField, TextField } from "./wizard-field.tsx";
import { numberBounds } from "./wizard-form.ts";

const shape = CreateEndpointInput.shape;

/**
 * Step 3: the endpoint's name, its GPUs and its replica bounds. `gpuChoices` are suggestions
 * (the fleet's models, then the ones Thaw knows); any model name the pattern takes is allowed.
 */
export function ScalingStep({ gpuChoices }: { gpuChoices: readonly string[] }) {
  return (
    <>
      <TextField
        name="slug"
        label="Endpoint slug"
        hint="Lowercase letters, digits and '-': the name in URLs and the API."
      />
      <TextField name="name" label="Display name" />
      <TextField name="gpuType" label="GPU type" list="deploy-gpu-choices" />
      <datalist id="deploy-gpu-choices">
        {gpuChoices.map((gpu) => (
          <option key={gpu} value={gpu} />
        ))}
      </datalist>
      <NumberField name="gpuCount" label="GPUs per replica" bounds={numberBounds(shape.gpuCount)} />
      <NumberField
        name="minReplicas"
        label="Minimum replicas"
        bounds={numberBounds(shape.minReplicas)}
      />
      <NumberField
        name="desiredReplicas"
        label="Desired replicas"
        hint="Blank: the minimum."
        bounds={numberBounds(shape.desiredReplicas)}
      />
      <NumberField
        name="maxReplicas"
        label="Maximum replicas"
        bounds={numberBounds(shape.maxReplicas)}
      />
    </>
  );
}
