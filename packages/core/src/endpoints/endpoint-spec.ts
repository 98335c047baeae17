import { z } from "zod";
import { DeploymentSpec, DeploymentView } from "../deployments/deployment-spec.ts";
import { whenFieldsParsed } from "../schemas/when-fields-parsed.ts";
import { plainText } from "@thaw/protocol";
import { Objective, StartPath } from "../vocabulary/index.ts";
import {
  PLATFORM_WAIT_OBJECTIVE,
  MAX_GPU_SECONDS_PER_WAIT_SECOND,
} from "../scheduling/wait-price.ts";

// An endpoint as clients create and change it and as the API answers it, declared once for
// tRPC, REST and the OpenAPI document.

export const MAX_REPLICAS = 1_000;
/** Live endpoints per org: the dashboard lists this many. */
export const MAX_ENDPOINTS_PER_ORG = 500;

/**
 * GPU models an endpoint may ask for besides those its org's fleet already has: what the
 * agents report (nvidia-smi's name without "NVIDIA ") for the instance types Thaw knows.
 */
export const KNOWN_GPU_MODELS = [
  "T4",
  "L4",
  "A10",
  "A10G",
  "L40",
  "L40S",
  "A100",
  "A100 40GB",
  "A100 80GB",
  "H100",
  "H100 80GB",
  "H200",
  "B200",
  "GH200",
  "RTX 6000 Ada",
] as const;

export const Slug = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,62}$/,
    "1–63 lowercase letters, digits or '-', starting with a letter or digit",
  )
  .meta({ example: "llama-3-2-3b-instruct" });

// Exactly as the pattern says (not trimmed into it): what the document refuses, the API does.
export const GpuType = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}$/, "a GPU model name such as L40S or A100 80GB")
  .meta({ example: "L40S" });

const replicas = z.number().int().min(0).max(MAX_REPLICAS);

/** What a price of waiting means, for every schema and document that carries one. */
export const WAIT_PRICE_MEANING =
  "GPU-seconds of idle capacity Thaw may spend to save one second of one request's wait: the warm pool keeps a replica warm (or pre-warms one) only while the GPU time it holds costs less than the wait it saves at this price. 0 keeps nothing warm beyond minReplicas; larger values put latency first.";

/** A price of waiting as a user sets it (endpoint or org default). */
export const GpuSecondsPerWaitSecond = z
  .number()
  .min(0)
  .max(MAX_GPU_SECONDS_PER_WAIT_SECOND)
  .meta({ example: 4 });

/** The endpoint's price as create and update take it: a number, or null for the org's default. */
const endpointWaitPrice = GpuSecondsPerWaitSecond.nullable().meta({
  description: `${WAIT_PRICE_MEANING} Omitted or null: the org's default (set by its admins), else ${PLATFORM_WAIT_OBJECTIVE}.`,
});

/** The price that holds for an endpoint and where it comes from. */
export const EffectiveWaitPriceView = z
  .object({
    value: z
      .number()
      .min(0)
      .nullable()
      .meta({ description: `Null with source platform: no price, ${PLATFORM_WAIT_OBJECTIVE}.` }),
    source: z.enum(["endpoint", "org", "platform"]).meta({
      description:
        "Where the value comes from: the endpoint's own gpuSecondsPerWaitSecond, its org's default, or the platform's.",
    }),
  })
  .meta({
    id: "EffectiveWaitPrice",
    description: `The price of waiting that holds for an endpoint. ${WAIT_PRICE_MEANING}`,
  });

export const AllowedPaths = z
  .array(StartPath)
  .min(1, "at least one start path")
  .max(StartPath.options.length)
  .refine((paths) => new Set(paths).size === paths.length, "a path appears twice");

const scalingFields = {
  minReplicas: replicas,
  maxReplicas: replicas.min(1),
  scaleToZeroIdleSeconds: z.number().int().min(0).max(86_400),
  allowedPaths: AllowedPaths,
  objective: Objective,
  targetConcurrency: z.number().int().min(1).max(10_000),
};

/** Where min ≤ desired ≤ max fails, or null: the field to blame and why. */
export function scalingBoundsProblem(b: {
  minReplicas: number;
  maxReplicas: number;
  desiredReplicas?: number | undefined;
}): { field: "minReplicas" | "desiredReplicas"; message: string } | null {
  if (b.minReplicas > b.maxReplicas)
    return {
      field: "minReplicas",
      message: `minReplicas (${b.minReplicas}) is above maxReplicas (${b.maxReplicas})`,
    };
  if (
    b.desiredReplicas !== undefined &&
    (b.desiredReplicas < b.minReplicas || b.desiredReplicas > b.maxReplicas)
  )
    return {
      field: "desiredReplicas",
      message: `desiredReplicas (${b.desiredReplicas}) is outside ${b.minReplicas}–${b.maxReplicas}`,
    };
  return null;
}

/** The desired count moved into new bounds. */
export function clampDesired(desired: number, minReplicas: number, maxReplicas: number): number {
  return Math.min(maxReplicas, Math.max(minReplicas, desired));
}

export const CreateEndpointInput = z
  .object({
    slug: Slug,
    name: plainText(100),
    gpuType: GpuType,
    gpuCount: z.number().int().min(1).max(8).default(1),
    minReplicas: scalingFields.minReplicas.default(0),
    maxReplicas: scalingFields.maxReplicas.default(1),
    /** Omitted: minReplicas. */
    desiredReplicas: replicas.optional(),
    scaleToZeroIdleSeconds: scalingFields.scaleToZeroIdleSeconds.default(300),
    allowedPaths: AllowedPaths.default(["warm", "wake", "restore", "peer", "lazy", "pull"]),
    objective: Objective.default("mean"),
    targetConcurrency: scalingFields.targetConcurrency.default(8),
    gpuSecondsPerWaitSecond: endpointWaitPrice.optional(),
    deployment: DeploymentSpec,
  })
  .strict()
  .superRefine(
    (input, ctx) => {
      const problem = scalingBoundsProblem(input);
      if (problem)
        ctx.addIssue({ code: "custom", path: [problem.field], message: problem.message });
    },
    whenFieldsParsed("minReplicas", "maxReplicas", "desiredReplicas"),
  )
  .meta({ id: "CreateEndpoint" });
export type CreateEndpointInput = z.output<typeof CreateEndpointInput>;

/** A change of an endpoint's configuration; its deployment changes through a new deployment. */
export const UpdateEndpointInput = z
  .object({
    name: plainText(100).optional(),
    minReplicas: scalingFields.minReplicas.optional(),
    maxReplicas: scalingFields.maxReplicas.optional(),
    scaleToZeroIdleSeconds: scalingFields.scaleToZeroIdleSeconds.optional(),
    allowedPaths: AllowedPaths.optional(),
    objective: Objective.optional(),
    targetConcurrency: scalingFields.targetConcurrency.optional(),
    gpuSecondsPerWaitSecond: endpointWaitPrice.optional(),
  })
  .strict()
  .refine((input) => Object.values(input).some((v) => v !== undefined), "nothing to change")
  .meta({ id: "UpdateEndpoint", minProperties: 1 });
export type UpdateEndpointInput = z.output<typeof UpdateEndpointInput>;

/** An endpoint as the API answers it. */
export const EndpointView = z
  .object({
    id: z.uuid(),
    slug: z.string(),
    name: z.string(),
    gpuType: z.string(),
    gpuCount: z.number().int().min(1),
    minReplicas: z.number().int().min(0),
    maxReplicas: z.number().int().min(0),
    desiredReplicas: z.number().int().min(0),
    scaleToZeroIdleSeconds: z.number().int().min(0),
    allowedPaths: z.array(StartPath),
    objective: Objective,
    targetConcurrency: z.number().int().min(1),
    gpuSecondsPerWaitSecond: z
      .number()
      .min(0)
      .nullable()
      .meta({ description: "The endpoint's own price of waiting; null: it follows the default." }),
    effectiveGpuSecondsPerWaitSecond: EffectiveWaitPriceView,
    version: z.number().int().min(0),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    activeDeployment: DeploymentView.nullable(),
  })
  .meta({ id: "Endpoint" });
export type EndpointView = z.infer<typeof EndpointView>;

export const EndpointList = z
  .object({ endpoints: z.array(EndpointView) })
  .meta({ id: "EndpointList" });

export const DeletedEndpoint = z
  .object({ id: z.uuid(), slug: z.string(), deletedAt: z.iso.datetime() })
  .meta({ id: "DeletedEndpoint" });
