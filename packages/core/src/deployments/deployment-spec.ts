import { plainText, ScenarioEngine, ScenarioLayer } from "@thaw/protocol";
import { z } from "zod";
import { whenFieldsParsed } from "../schemas/when-fields-parsed.ts";
import { DeploymentStatus } from "../vocabulary/index.ts";
import { IMAGE_REFERENCE, imageRefProblem, modelSourceProblem } from "./source-policy.ts";

// A deployment as clients send it and as the API answers it, declared once: tRPC, REST, the
// OpenAPI document and the dashboard's deploy wizard all use these schemas. Zod and the
// source policy only (no Node API, no database), so a browser bundle can import this module
// through @thaw/core/schemas; storing a spec is write-active-deployment.ts.

const GB = 1_000_000_000;
/** 1 TB: larger than any image or model a GPU host can hold, small enough to be exact. */
const MAX_ARTIFACT_BYTES = 1_000 * GB;
const bytes = z.number().int().min(1).max(MAX_ARTIFACT_BYTES);
const digest = z
  .string()
  .regex(/^sha256:[a-f0-9]{64}$/, "sha256:<64 lowercase hex digits>")
  .meta({ example: `sha256:${"0".repeat(64)}` });

export const ENGINES = ["vllm", "sglang", "llama.cpp", "tgi", "triton", "custom"] as const;
export const Engine = z.enum(ENGINES);
export type Engine = z.infer<typeof Engine>;

/**
 * The engine's own timings (engineProfile column); weights come from the model artifact.
 * Where the weights sit (weightsSource) is a fact of one start, never a client's claim.
 */
export const EngineProfile = ScenarioEngine.omit({
  weightsBytes: true,
  warmCaches: true,
  weightsSource: true,
})
  .extend({
    initSeconds: z.number().min(0).max(3_600),
    compileSeconds: z.number().min(0).max(3_600),
    graphCaptureSeconds: z.number().min(0).max(3_600),
    warmupSeconds: z.number().min(0).max(3_600),
    loaderConcurrency: z.number().int().min(1).max(256),
    readFraction: z.number().min(0).max(1).optional(),
  })
  .strict();
export type EngineProfile = z.infer<typeof EngineProfile>;

/**
 * An engine's timings when the deployment does not give them: the field notes' figures
 * (shared/docs/cold-start-field-notes.md), the same the demo catalog uses.
 */
export const ENGINE_PROFILE_DEFAULTS: Record<Engine, EngineProfile> = {
  vllm: {
    initSeconds: 10,
    compileSeconds: 27,
    graphCaptureSeconds: 34,
    warmupSeconds: 40,
    loader: "sequential",
    loaderConcurrency: 1,
  },
  sglang: {
    initSeconds: 12,
    compileSeconds: 0,
    graphCaptureSeconds: 30,
    warmupSeconds: 20,
    loader: "sequential",
    loaderConcurrency: 1,
  },
  "llama.cpp": {
    initSeconds: 1.5,
    compileSeconds: 0,
    graphCaptureSeconds: 0,
    warmupSeconds: 0.5,
    loader: "sequential",
    loaderConcurrency: 1,
  },
  tgi: {
    initSeconds: 8,
    compileSeconds: 0,
    graphCaptureSeconds: 20,
    warmupSeconds: 15,
    loader: "sequential",
    loaderConcurrency: 1,
  },
  triton: {
    initSeconds: 6,
    compileSeconds: 0,
    graphCaptureSeconds: 0,
    warmupSeconds: 5,
    loader: "sequential",
    loaderConcurrency: 1,
  },
  custom: {
    initSeconds: 5,
    compileSeconds: 0,
    graphCaptureSeconds: 0,
    warmupSeconds: 5,
    loader: "sequential",
    loaderConcurrency: 1,
  },
};

/** Largest layer the derived layout uses (registries and pullers handle layers of this size well). */
const DERIVED_LAYER_BYTES = 2 * GB;

/**
 * Image layers when the client gives only the image's size: equal layers of at most 2 GB,
 * gzip-6 (docker's default), counted as code — what the cold-start model assumes for an
 * image it knows nothing else about.
 */
export function deriveImageLayers(imageBytes: number): ScenarioLayer[] {
  const count = Math.max(1, Math.ceil(imageBytes / DERIVED_LAYER_BYTES));
  const base = Math.floor(imageBytes / count);
  return Array.from({ length: count }, (_, i) => ({
    bytes: i === count - 1 ? imageBytes - base * (count - 1) : base,
    compression: "gzip-6" as const,
    content: "code" as const,
  }));
}

export const ModelSource = plainText(2_048)
  .superRefine((source, ctx) => {
    const problem = modelSourceProblem(source);
    if (problem) ctx.addIssue({ code: "custom", message: `model source refused: ${problem}` });
  })
  .meta({
    description:
      "hf://owner/repo[/file], s3://bucket/key, gs://bucket/key or https:// on a public host (no private, loopback, link-local or metadata addresses).",
    example: "hf://meta-llama/Llama-3.2-3B-Instruct",
  });

// Not plainText: the grammar leaves no room for whitespace or control characters, and an
// input the document's pattern refuses must be refused as sent, not trimmed into shape.
export const ImageRef = z
  .string()
  .min(1)
  .max(512)
  .regex(IMAGE_REFERENCE, "not an image reference: [registry[:port]/]name[:tag][@sha256:<64 hex>]")
  .superRefine((ref, ctx) => {
    const problem = imageRefProblem(ref);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .meta({ example: "registry.example.com/vllm-openai:v0.11.0" });

/** What a client sends to create a deployment (a new immutable version of an endpoint). */
export const DeploymentSpec = z
  .object({
    imageRef: ImageRef,
    /** Omitted: what the registry resolves imageRef to (or, when sizes are given, its hash). */
    imageDigest: digest.optional(),
    imageBytes: bytes.optional().meta({
      description:
        "Uncompressed image size in bytes. Omitted (with imageLayers): read from the registry.",
    }),
    /** Omitted: the registry's layers, or equal layers derived from imageBytes (deriveImageLayers). */
    imageLayers: z.array(ScenarioLayer).min(1).max(128).optional(),
    estargzImageRef: ImageRef.optional(),
    estargzDigest: digest.optional(),
    modelSource: ModelSource,
    modelBytes: bytes.optional().meta({
      description: "Bytes of the weights. Omitted: sized from the model source.",
    }),
    modelFormat: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{0,31}$/, "lowercase letters, digits, '.', '_' or '-'")
      .optional()
      .meta({
        example: "safetensors",
        description: "Omitted: detected from the model source's files.",
      }),
    engine: Engine,
    engineArgs: z.array(plainText(1_024)).max(64).default([]),
    /** Omitted fields come from the engine's defaults (ENGINE_PROFILE_DEFAULTS). */
    engineProfile: EngineProfile.partial().strict().optional(),
  })
  .strict()
  .superRefine((spec, ctx) => {
    if (spec.imageLayers && spec.imageBytes !== undefined) {
      const sum = spec.imageLayers.reduce((s, l) => s + l.bytes, 0);
      if (sum !== spec.imageBytes)
        ctx.addIssue({
          code: "custom",
          path: ["imageLayers"],
          message: `layers add up to ${sum} bytes, imageBytes says ${spec.imageBytes}`,
        });
    }
  })
  .superRefine(
    (spec, ctx) => {
      if (spec.estargzDigest && !spec.estargzImageRef)
        ctx.addIssue({
          code: "custom",
          path: ["estargzDigest"],
          message: "an eStargz digest needs estargzImageRef",
        });
    },
    whenFieldsParsed("estargzDigest", "estargzImageRef"),
  )
  .meta({ id: "DeploymentSpec" });
export type DeploymentSpec = z.output<typeof DeploymentSpec>;

/** A deployment as the API answers it. */
export const DeploymentView = z
  .object({
    id: z.uuid(),
    endpointId: z.uuid(),
    version: z.number().int().min(1),
    status: DeploymentStatus,
    imageRef: z.string(),
    imageDigest: z.string(),
    imageBytes: z.number().int(),
    imageLayers: z.array(ScenarioLayer),
    estargzImageRef: z.string().nullable(),
    estargzDigest: z.string().nullable(),
    modelSource: z.string(),
    modelBytes: z.number().int(),
    modelFormat: z.string(),
    engine: z.string(),
    engineArgs: z.array(z.string()),
    engineProfile: EngineProfile.partial(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: "Deployment" });
export type DeploymentView = z.infer<typeof DeploymentView>;
