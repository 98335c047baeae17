"use client";

import {
  GpuSecondsPerWaitSecond,
  Objective,
  PLATFORM_WAIT_OBJECTIVE,
  StartPath,
  WAIT_PRICE_MEANING,
} from "@thaw/core/schemas";
import { useFormContext, useFormState } from "react-hook-form";
import { fieldId, NumberField, SelectField } from "./wizard-field.tsx";
import { numberBounds, type WizardValues } from "./wizard-form.ts";

const OBJECTIVE_OPTIONS = Objective.options.map((objective) => ({
  value: objective,
  label: `${objective} time-to-ready`,
}));

/** Step 4: the start paths the scheduler may use, what it minimises, and the price of waiting. */
export function PathsStep() {
  return (
    <>
      <AllowedPaths />
      <SelectField name="objective" label="Objective" options={OBJECTIVE_OPTIONS} />
      <NumberField
        name="gpuSecondsPerWaitSecond"
        label="Price of waiting (optional)"
        hint={`${WAIT_PRICE_MEANING} Blank: the org's default, else ${PLATFORM_WAIT_OBJECTIVE}.`}
        bounds={numberBounds(GpuSecondsPerWaitSecond)}
      />
    </>
  );
}

/** One checkbox per start path (the first carries the field's id, which takes the focus). */
function AllowedPaths() {
  const { register, clearErrors, getFieldState } = useFormContext<WizardValues>();
  const formState = useFormState<WizardValues>({ name: "allowedPaths" });
  const message = getFieldState("allowedPaths", formState).error?.message;
  const id = fieldId("allowedPaths");
  return (
    <fieldset
      className="wizard-paths"
      aria-invalid={message ? true : undefined}
      aria-describedby={message ? `${id}-error` : undefined}
    >
      <legend>Allowed start paths</legend>
      {StartPath.options.map((path, i) => (
        <label key={path} className="inline-field">
          <input
            type="checkbox"
            value={path}
            id={i === 0 ? id : undefined}
            data-testid={`deploy-path-${path}`}
            {...register("allowedPaths", { onChange: () => clearErrors("allowedPaths") })}
          />
          {path}
        </label>
      ))}
      {message && (
        <span id={`${id}-error`} className="form-error" data-testid={`${id}-error`}>
          {message}
        </span>
      )}
    </fieldset>
  );
}
