import { CreateEndpointInput } from "@thaw/core/schemas";
import type { DefaultValues, FieldPath } from "react-hook-form";
import { z } from "zod";

// The deploy wizard's form, outside React so that it can be tested: the values are what
// endpoints.create takes (core's CreateEndpointInput, as typed), validated by that schema
// through react-hook-form's zod resolver; rolling a new deployment uses its `deployment`
// alone. Nothing here states a rule: bounds, patterns and defaults are read from core.

export type WizardValues = z.input<typeof CreateEndpointInput>;
export type WizardField = FieldPath<WizardValues>;

export interface WizardStep {
  title: string;
  /** The fields the step shows, in the order a user meets them (the first error gets focus). */
  fields: readonly WizardField[];
}

const IMAGE: WizardStep = {
  title: "Image",
  fields: [
    "deployment.imageRef",
    "deployment.imageDigest",
    "deployment.imageBytes",
    "deployment.estargzImageRef",
    "deployment.estargzDigest",
  ],
};
const MODEL: WizardStep = {
  title: "Model",
  fields: [
    "deployment.modelSource",
    "deployment.engine",
    "deployment.modelBytes",
    "deployment.modelFormat",
  ],
};
const SCALING: WizardStep = {
  title: "GPU and scaling",
  fields: ["slug", "name", "gpuType", "gpuCount", "minReplicas", "desiredReplicas", "maxReplicas"],
};
const PATHS: WizardStep = {
  title: "Paths and objective",
  fields: ["allowedPaths", "objective", "gpuSecondsPerWaitSecond"],
};
const REVIEW: WizardStep = { title: "Review", fields: [] };

/** image → model → GPU and scaling → paths and objective → review; a roll skips the endpoint's. */
export function wizardSteps(rolling: boolean): readonly WizardStep[] {
  return rolling ? [IMAGE, MODEL, REVIEW] : [IMAGE, MODEL, SCALING, PATHS, REVIEW];
}

/** The step that shows a field, or null when none does. */
export function stepOf(steps: readonly WizardStep[], field: WizardField): number | null {
  const index = steps.findIndex((step) => step.fields.includes(field));
  return index === -1 ? null : index;
}

const shape = CreateEndpointInput.shape;

/**
 * What the form starts from: core's defaults (desired left out: the minimum), and vLLM (the
 * model's size and format are found from its source). A number field left blank is left out, so core's default holds; the
 * form shows that same default again when its step is opened anew (react-hook-form puts a
 * field's default back where its value is undefined), so a blank never means two things.
 */
export function startingValues(): DefaultValues<WizardValues> {
  return {
    gpuCount: shape.gpuCount.parse(undefined),
    minReplicas: shape.minReplicas.parse(undefined),
    maxReplicas: shape.maxReplicas.parse(undefined),
    allowedPaths: shape.allowedPaths.parse(undefined),
    objective: shape.objective.parse(undefined),
    deployment: { engine: "vllm" },
  };
}

/** Sizes are entered in GB (10^9 bytes, as registries count) and held in bytes. */
export const BYTES_PER_GB = 1_000_000_000;
export const GIGABYTE_FIELDS = ["deployment.imageBytes", "deployment.modelBytes"] as const;

/** Typed text as bytes: undefined when blank, NaN (refused as "not a number") when not one. */
export function bytesOfGigabytes(text: string): number | undefined {
  return text.trim() === "" ? undefined : Math.round(Number(text) * BYTES_PER_GB);
}

/** Typed text as a number: undefined when blank (the field is then omitted or its default holds). */
export function numberOfText(text: string): number | undefined {
  return text.trim() === "" ? undefined : Number(text);
}

/** Typed text trimmed; undefined when blank, for the fields that may be left out. */
export function optionalText(text: string): string | undefined {
  return text.trim() === "" ? undefined : text.trim();
}

/** The bounds a number field's schema sets, for the input's min and max attributes. */
export function numberBounds(schema: z.ZodType): { min?: number; max?: number } {
  if (
    schema instanceof z.ZodDefault ||
    schema instanceof z.ZodOptional ||
    schema instanceof z.ZodNullable
  )
    return numberBounds(schema.unwrap() as z.ZodType);
  if (!(schema instanceof z.ZodNumber)) return {};
  return {
    ...(schema.minValue !== null && Number.isFinite(schema.minValue) && { min: schema.minValue }),
    ...(schema.maxValue !== null && Number.isFinite(schema.maxValue) && { max: schema.maxValue }),
  };
}

const isGigabyteField = (path: readonly PropertyKey[] | undefined) =>
  (GIGABYTE_FIELDS as readonly string[]).includes((path ?? []).map(String).join("."));

const gigabytes = (bytes: number | bigint) => `${Number(bytes) / BYTES_PER_GB} GB`;

/**
 * zod's messages said the way a form says them (a size in GB, not bytes), for the issues core
 * leaves worded by zod; the messages core writes itself (patterns, the source policy, min ≤
 * desired ≤ max) are shown as written. The bounds come from the issue, that is from core.
 */
export const wizardMessages: z.core.$ZodErrorMap = (issue) => {
  const inGigabytes = isGigabyteField(issue.path);
  switch (issue.code) {
    case "invalid_type":
      if (issue.input === undefined) return "Required.";
      if (issue.expected === "int") return "A whole number.";
      if (issue.expected === "number") return inGigabytes ? "A size in GB." : "A number.";
      return undefined;
    case "too_small":
      if (issue.origin === "string") return Number(issue.minimum) <= 1 ? "Required." : undefined;
      if (issue.origin !== "number") return undefined;
      if (inGigabytes)
        return `Above ${Number(issue.minimum) <= 1 ? "0 GB" : gigabytes(issue.minimum)}.`;
      return `At least ${issue.minimum}.`;
    case "too_big":
      if (issue.origin !== "number") return undefined;
      return `At most ${inGigabytes ? gigabytes(issue.maximum) : String(issue.maximum)}.`;
    default:
      return undefined;
  }
};

/**
 * The field a server error names (`details.field`: `input.deployment.imageRef` from
 * endpoints.create, `deployment.imageRef` from deployments.create), among the wizard's fields:
 * the longest that is the named path or contains it.
 */
export function fieldOfServerError(
  error: unknown,
  fields: readonly WizardField[],
): WizardField | null {
  const data = (error as { data?: { details?: { field?: unknown } | null } } | null)?.data;
  const named = typeof data?.details?.field === "string" ? data.details.field : "";
  const path = named.replace(/^(input|body)\./, "");
  const matches = fields.filter((field) => path === field || path.startsWith(`${field}.`));
  return matches.sort((a, b) => b.length - a.length)[0] ?? null;
}

/** A server error's message without the path it starts with (the field shows where). */
export function messageOfServerError(message: string): string {
  return message.replace(/^(input|body|deployment)\.[\w.]+: /, "");
}
