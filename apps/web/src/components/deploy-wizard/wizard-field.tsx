"use client";

import { useState, type ReactNode } from "react";
import { useController, useFormContext, useFormState } from "react-hook-form";
import {
  BYTES_PER_GB,
  bytesOfGigabytes,
  numberOfText,
  optionalText,
  type GIGABYTE_FIELDS,
  type WizardField,
  type WizardValues,
} from "./wizard-form.ts";

// One labelled field of the deploy wizard: its hint, and the error the resolver or the server
// gave it, tied to the input for screen readers. The ids (deploy-<path with dashes>) are what
// the browser tests and the error focus find. react-hook-form passes setValueAs what the
// input holds (text) and also the values it writes into the input (a default, a number).

export const fieldId = (name: WizardField) => `deploy-${name.replace(/\./g, "-")}`;

/** What every input of a field carries. */
export interface ControlProps {
  id: string;
  "aria-invalid": true | undefined;
  "aria-describedby": string | undefined;
  "data-testid": string;
}

export function Field({
  name,
  label,
  hint,
  children,
}: {
  name: WizardField;
  label: string;
  hint?: string | undefined;
  children: (control: ControlProps) => ReactNode;
}) {
  const { getFieldState } = useFormContext<WizardValues>();
  const formState = useFormState<WizardValues>({ name });
  const message = getFieldState(name, formState).error?.message;
  const id = fieldId(name);
  const control: ControlProps = {
    id,
    "aria-invalid": message ? true : undefined,
    "aria-describedby":
      [message && `${id}-error`, hint && `${id}-hint`].filter(Boolean).join(" ") || undefined,
    "data-testid": id,
  };
  return (
    <div className="wizard-field">
      <label htmlFor={id}>{label}</label>
      {children(control)}
      {hint && (
        <span id={`${id}-hint`} className="muted small">
          {hint}
        </span>
      )}
      {message && (
        <span id={`${id}-error`} className="form-error" data-testid={`${id}-error`}>
          {message}
        </span>
      )}
    </div>
  );
}

/** A one-line text field, trimmed; an optional one is left out when blank. */
export function TextField({
  name,
  label,
  hint,
  optional = false,
  list,
}: {
  name: WizardField;
  label: string;
  hint?: string;
  optional?: boolean;
  list?: string;
}) {
  const { register, clearErrors } = useFormContext<WizardValues>();
  return (
    <Field name={name} label={label} hint={hint}>
      {(control) => (
        <input
          type="text"
          autoComplete="off"
          list={list}
          {...control}
          {...register(name, {
            setValueAs: (value: unknown) =>
              typeof value !== "string" ? value : optional ? optionalText(value) : value.trim(),
            onChange: () => clearErrors(name),
          })}
        />
      )}
    </Field>
  );
}

/** A number field; blank leaves it out (core's default, or the org's price, holds). */
export function NumberField({
  name,
  label,
  hint,
  bounds,
}: {
  name: WizardField;
  label: string;
  hint?: string;
  bounds: { min?: number; max?: number };
}) {
  const { register, clearErrors } = useFormContext<WizardValues>();
  return (
    <Field name={name} label={label} hint={hint}>
      {(control) => (
        <input
          type="number"
          inputMode="decimal"
          step="any"
          {...bounds}
          {...control}
          {...register(name, {
            setValueAs: (value: unknown) =>
              typeof value === "string" ? numberOfText(value) : value,
            onChange: () => clearErrors(name),
          })}
        />
      )}
    </Field>
  );
}

/** A size typed in GB and held in bytes, as the spec takes it. */
export function GigabytesField({
  name,
  label,
}: {
  name: (typeof GIGABYTE_FIELDS)[number];
  label: string;
}) {
  const { control, clearErrors } = useFormContext<WizardValues>();
  const { field } = useController({ control, name });
  // The text as typed ("1.", "0.50") stays; the form holds the bytes it means.
  const [text, setText] = useState(() =>
    typeof field.value === "number" && Number.isFinite(field.value)
      ? String(field.value / BYTES_PER_GB)
      : "",
  );
  return (
    <Field name={name} label={label}>
      {(controlProps) => (
        <input
          type="text"
          inputMode="decimal"
          autoComplete="off"
          {...controlProps}
          name={field.name}
          ref={field.ref}
          value={text}
          onBlur={field.onBlur}
          onChange={(event) => {
            setText(event.target.value);
            field.onChange(bytesOfGigabytes(event.target.value));
            clearErrors(name);
          }}
        />
      )}
    </Field>
  );
}

/** A choice among a closed set (core's engines, objectives). */
export function SelectField({
  name,
  label,
  options,
}: {
  name: WizardField;
  label: string;
  options: readonly { value: string; label: string }[];
}) {
  const { register } = useFormContext<WizardValues>();
  return (
    <Field name={name} label={label}>
      {(control) => (
        <select {...control} {...register(name)}>
          {options.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}
