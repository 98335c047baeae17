import { createHash } from "node:crypto";

// Endpoints of the demo org: real open models with realistic artefact sizes and engine
// timings (see shared/docs/cold-start-field-notes.md for where the timings come from).

const GB = 1_000_000_000;
const digestOf = (ref: string) => `sha256:${createHash("sha256").update(ref).digest("hex")}`;

export interface DemoEndpoint {
  slug: string;
  name: string;
  gpuType: string;
  gpuCount: number;
  minReplicas: number;
  maxReplicas: number;
  scaleToZeroIdleSeconds: number;
  objective: "mean" | "p90";
  deployment: {
    imageRef: string;
    imageDigest: string;
    estargzImageRef: string | null;
    estargzDigest: string | null;
    imageLayers: { bytes: number; compression: string; content: string }[];
    modelSource: string;
    modelBytes: number;
    modelFormat: string;
    engine: string;
    engineArgs: string[];
    engineProfile: Record<string, number | string | boolean>;
  };
}

function image(ref: string, layers: DemoEndpoint["deployment"]["imageLayers"], estargz: boolean) {
  const esgzRef = estargz ? `${ref}-esgz` : null;
  return {
    imageRef: ref,
    imageDigest: digestOf(ref),
    estargzImageRef: esgzRef,
    estargzDigest: esgzRef && digestOf(esgzRef),
    imageLayers: layers,
  };
}

export const DEMO_ENDPOINTS: DemoEndpoint[] = [
  {
    slug: "llama-3-2-1b-gguf",
    name: "Llama 3.2 1B Instruct (GGUF, llama.cpp)",
    gpuType: "A10G",
    gpuCount: 1,
    minReplicas: 0,
    maxReplicas: 4,
    scaleToZeroIdleSeconds: 300,
    objective: "mean",
    deployment: {
      // llama.cpp server image with the Q8_0 GGUF baked in: 2.4 GB in all.
      ...image(
        "registry.demo.thaw.dev/llama-3.2-1b-instruct-gguf:q8_0",
        [
          { bytes: 1.32 * GB, compression: "gzip-6", content: "weights" },
          { bytes: 0.98 * GB, compression: "gzip-6", content: "code" },
          { bytes: 0.1 * GB, compression: "gzip-6", content: "data" },
        ],
        true,
      ),
      modelSource: "hf://bartowski/Llama-3.2-1B-Instruct-GGUF/Llama-3.2-1B-Instruct-Q8_0.gguf",
      modelBytes: 1.32 * GB,
      modelFormat: "gguf",
      engine: "llama.cpp",
      engineArgs: ["--n-gpu-layers", "99", "--ctx-size", "8192"],
      engineProfile: {
        initSeconds: 1.5,
        compileSeconds: 0,
        graphCaptureSeconds: 0,
        warmupSeconds: 0.5,
        loader: "sequential",
        loaderConcurrency: 1,
      },
    },
  },
  {
    slug: "llama-3-2-3b-instruct",
    name: "Llama 3.2 3B Instruct (vLLM)",
    gpuType: "A10G",
    gpuCount: 1,
    minReplicas: 0,
    maxReplicas: 6,
    scaleToZeroIdleSeconds: 600,
    objective: "mean",
    deployment: {
      // vLLM OpenAI server image; weights (~6.4 GB bf16 safetensors) come from the model source.
      ...image(
        "registry.demo.thaw.dev/vllm-openai:v0.11.0",
        [
          { bytes: 4.6 * GB, compression: "gzip-6", content: "code" },
          { bytes: 3.1 * GB, compression: "gzip-6", content: "data" },
        ],
        true,
      ),
      modelSource: "hf://meta-llama/Llama-3.2-3B-Instruct",
      modelBytes: 6.43 * GB,
      modelFormat: "safetensors",
      engine: "vllm",
      engineArgs: ["--max-model-len", "8192", "--gpu-memory-utilization", "0.9"],
      // Field notes §3: torch.compile 8.53 s + FlashInfer autotune 18.5 s; warmup ~40 s; graphs 34 s.
      engineProfile: {
        initSeconds: 10,
        compileSeconds: 27,
        graphCaptureSeconds: 34,
        warmupSeconds: 40,
        loader: "sequential",
        loaderConcurrency: 1,
      },
    },
  },
  {
    slug: "meta-llama-3-8b",
    name: "Meta Llama 3 8B (vLLM, Run:ai streamer)",
    gpuType: "L40S",
    gpuCount: 1,
    minReplicas: 1,
    maxReplicas: 4,
    scaleToZeroIdleSeconds: 900,
    objective: "p90",
    deployment: {
      ...image(
        "registry.demo.thaw.dev/vllm-openai:v0.11.0",
        [
          { bytes: 4.6 * GB, compression: "gzip-6", content: "code" },
          { bytes: 3.1 * GB, compression: "gzip-6", content: "data" },
        ],
        true,
      ),
      modelSource: "s3://thaw-demo-models/meta-llama/Meta-Llama-3-8B/",
      modelBytes: 15 * GB,
      modelFormat: "safetensors",
      engine: "vllm",
      engineArgs: [
        "--load-format",
        "runai_streamer",
        "--model-loader-extra-config",
        '{"concurrency":16}',
      ],
      engineProfile: {
        initSeconds: 10,
        compileSeconds: 27,
        graphCaptureSeconds: 34,
        warmupSeconds: 20,
        loader: "concurrent",
        loaderConcurrency: 16,
      },
    },
  },
  {
    slug: "gpt-oss-20b",
    name: "GPT-OSS 20B (13 GB image)",
    gpuType: "L40S",
    gpuCount: 1,
    minReplicas: 0,
    maxReplicas: 3,
    scaleToZeroIdleSeconds: 600,
    objective: "mean",
    deployment: {
      // Field notes §2: one ~12 GB weights layer plus ~0.9 GB of Python and libraries.
      ...image(
        "registry.demo.thaw.dev/gpt-oss-20b:mxfp4",
        [
          { bytes: 12 * GB, compression: "gzip-9", content: "weights" },
          { bytes: 0.9 * GB, compression: "gzip-9", content: "code" },
        ],
        true,
      ),
      modelSource: "hf://openai/gpt-oss-20b",
      modelBytes: 12 * GB,
      modelFormat: "safetensors-mxfp4",
      engine: "vllm",
      engineArgs: ["--async-scheduling"],
      engineProfile: {
        initSeconds: 12,
        compileSeconds: 20,
        graphCaptureSeconds: 25,
        warmupSeconds: 10,
        loader: "sequential",
        loaderConcurrency: 1,
      },
    },
  },
];

export const DEMO_ORG = { slug: "demo", name: "Demo Inc." };
export const DEMO_USER = {
  email: "demo@thaw.dev",
  name: "Demo Operator",
  password: "thaw-demo-password",
};
