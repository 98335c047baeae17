import { HOST_PROFILES, PHYSICS, VLLM_ENGINE } from "@thaw/core/cold-start-model";
import type { EndpointSpec } from "@thaw/core/replay";

// Real open models from 1 to 70 B for the ServeGen workload's endpoints, with the figures a
// cold start depends on: the safetensors bytes (what the image carries, the loader reads and
// the GPU holds), the GPUs they need on the replay fleets' hosts, the engine image, the engine
// phase times and the snapshot size. Every figure says where it comes from; where a page only
// showed shard sizes, the bytes are their sum as the page printed them (GB = 1e9 bytes).

export type ModelKind = "language" | "reasoning" | "vision-language";

export interface CatalogueModel {
  /** Hugging Face repository id. */
  id: string;
  kind: ModelKind;
  /** Parameters in billions (the model card's figure; only the prefill rate uses it). */
  billionParams: number;
  /** BF16 safetensors bytes: what the GPUs hold and the loader reads. */
  weightsBytes: number;
  /** Where the byte figure was read. */
  source: string;
}

export const MODELS = [
  {
    id: "meta-llama/Llama-3.2-1B-Instruct",
    kind: "language",
    billionParams: 1.24,
    // model.safetensors 2.47 GB, the one weights file, as listed on the files page of a copy
    // uploaded by Hugging Face staff (pcuenq) with the gated original's files.
    weightsBytes: 2.47e9,
    source:
      "https://huggingface.co/fanherodev/Llama-3.2-1B-Instruct/tree/898999bd25b40516fce5a5b8f0948f4c81c650bc",
  },
  {
    id: "Qwen/Qwen2.5-3B-Instruct",
    kind: "language",
    billionParams: 3.09,
    // model.safetensors.index.json "total_size": 6171877376.
    weightsBytes: 6_171_877_376,
    source: "https://huggingface.co/Qwen/Qwen2.5-3B-Instruct/raw/main/model.safetensors.index.json",
  },
  {
    id: "Qwen/Qwen2.5-7B-Instruct",
    kind: "language",
    billionParams: 7.62,
    // model.safetensors.index.json "total_size": 15231233024.
    weightsBytes: 15_231_233_024,
    source: "https://huggingface.co/Qwen/Qwen2.5-7B-Instruct/raw/main/model.safetensors.index.json",
  },
  {
    id: "meta-llama/Llama-3.1-8B-Instruct",
    kind: "language",
    billionParams: 8.03,
    // model.safetensors.index.json "total_size": 16060522496 (the gated repo's index, quoted
    // in Hugging Face's docs); the four shards, 4.98 + 5.00 + 4.92 + 1.17 GB, are listed on
    // Hugging Face's own (HUGS) copy.
    weightsBytes: 16_060_522_496,
    source:
      "https://huggingface.co/hfhugs/Meta-Llama-3.1-8B-Instruct-inf2-bs8-c2-v0.2.0/tree/c4c0a64ec831961c93fe9d0faabf085e00315ed5/checkpoint",
  },
  {
    id: "Qwen/Qwen2.5-14B-Instruct",
    kind: "language",
    billionParams: 14.8,
    // Six BF16 shards 5.27 + 5.36 + 5.36 + 5.24 + 5.36 + 2.94 GB (MLX community's BF16 copy of
    // the official weights; the same architecture's DeepSeek-R1-Distill-Qwen-14B is 29.54 GB).
    weightsBytes: 29.53e9,
    source:
      "https://huggingface.co/mlx-community/Qwen2.5-14B-Instruct-bf16/tree/3b4b6d22265656633ced8bdfa0784ee8c97b3397",
  },
  {
    id: "mistralai/Mistral-Small-24B-Instruct-2501",
    kind: "language",
    billionParams: 23.6,
    // consolidated.safetensors 47.1 GB (the repo also carries the same weights as ten shards).
    weightsBytes: 47.1e9,
    source: "https://huggingface.co/mistralai/Mistral-Small-24B-Instruct-2501/tree/main",
  },
  {
    id: "Qwen/Qwen2.5-32B-Instruct",
    kind: "language",
    billionParams: 32.8,
    // 17 BF16 shards of ~3.9 GB on the official files page; their total, 65.53 GB, as the
    // original BF16 size of the 32B Qwen2.5 architecture in a quantisation's model card
    // (https://huggingface.co/tzervas/qwen2.5-coder-32b-bitnet-1.58b).
    weightsBytes: 65.53e9,
    source:
      "https://huggingface.co/Qwen/Qwen2.5-32B-Instruct/tree/35ab2cb83fcac3eca48c256b1b3cc506c72c85fd",
  },
  {
    id: "meta-llama/Llama-3.3-70B-Instruct",
    kind: "language",
    billionParams: 70.6,
    // 30 BF16 shards (4.58, 4.66, 5.00, 4.97 GB, …) on a copy of the gated repo; the
    // index "total_size": 141107412992 of the same architecture's Llama-3.1-70B-Instruct.
    weightsBytes: 141_107_412_992,
    source:
      "https://huggingface.co/osllmai-community/Llama-3.3-70B-Instruct/tree/c497d588054caa93d5139b02740ec49e0fcddb6f",
  },
  {
    id: "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
    kind: "reasoning",
    billionParams: 7.62,
    // Two shards 8.61 + 6.62 GB.
    weightsBytes: 15.23e9,
    source:
      "https://huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Qwen-7B/tree/393119fcd6a873e5776c79b0db01c96911f5f0fc",
  },
  {
    id: "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B",
    kind: "reasoning",
    billionParams: 14.8,
    // Four shards 8.71 + 8.67 + 8.67 + 3.49 GB.
    weightsBytes: 29.54e9,
    source:
      "https://huggingface.co/deepseek-ai/DeepSeek-R1-Distill-Qwen-14B/tree/5ee96d8a09692e87087a6e0496d87124a1cdc3fe",
  },
  {
    id: "Qwen/Qwen2-VL-7B-Instruct",
    kind: "vision-language",
    billionParams: 8.29,
    // Five shards 3.90 + 3.86 + 3.86 + 3.86 + 1.09 GB.
    weightsBytes: 16.57e9,
    source:
      "https://huggingface.co/Qwen/Qwen2-VL-7B-Instruct/tree/a7a06a1cc11b4514ce9edcde0e3ca1d16e5ff2fc",
  },
] as const satisfies readonly CatalogueModel[];

export type ModelId = (typeof MODELS)[number]["id"];

export function catalogueModel(id: string): CatalogueModel {
  const model = MODELS.find((m) => m.id === id);
  if (!model) throw new Error(`unknown catalogue model '${id}'`);
  return model;
}

/** ServeGen's five client pools (data/<category>/<pool>). */
export const POOLS = ["m-small", "m-mid", "m-large", "deepseek-r1", "mm-image"] as const;
export type Pool = (typeof POOLS)[number];

/**
 * Which models a pool's endpoints run, with relative weights. ServeGen's language pools are
 * Model Studio's small, mid and large language models, its reasoning pool DeepSeek-R1 and its
 * multimodal pool Qwen-VL; the catalogue maps them onto open models of the same class that
 * fit A10G / L40S hosts. In m-large the 70B model, which needs four GPUs, is drawn half as
 * often as the 24B and 32B ones.
 */
export const POOL_MODELS: Record<Pool, readonly { model: ModelId; weight: number }[]> = {
  "m-small": [
    { model: "meta-llama/Llama-3.2-1B-Instruct", weight: 1 },
    { model: "Qwen/Qwen2.5-3B-Instruct", weight: 1 },
  ],
  "m-mid": [
    { model: "Qwen/Qwen2.5-7B-Instruct", weight: 1 },
    { model: "meta-llama/Llama-3.1-8B-Instruct", weight: 1 },
    { model: "Qwen/Qwen2.5-14B-Instruct", weight: 1 },
  ],
  "m-large": [
    { model: "mistralai/Mistral-Small-24B-Instruct-2501", weight: 2 },
    { model: "Qwen/Qwen2.5-32B-Instruct", weight: 2 },
    { model: "meta-llama/Llama-3.3-70B-Instruct", weight: 1 },
  ],
  "deepseek-r1": [
    { model: "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", weight: 2 },
    { model: "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", weight: 1 },
  ],
  "mm-image": [{ model: "Qwen/Qwen2-VL-7B-Instruct", weight: 1 }],
};

/** A seeded weighted choice of a pool's model. */
export function drawModel(pool: Pool, random: () => number): CatalogueModel {
  const options = POOL_MODELS[pool];
  const total = options.reduce((sum, o) => sum + o.weight, 0);
  let u = random() * total;
  for (const option of options) {
    u -= option.weight;
    if (u < 0) return catalogueModel(option.model);
  }
  return catalogueModel(options.at(-1)!.model);
}

// --- GPUs ------------------------------------------------------------------------------------

/**
 * GPU memory a model needs: its weights plus ~20% for the KV cache, activations and the CUDA
 * context (vLLM's default gpu_memory_utilization 0.9 leaves the rest of the card).
 */
export const GPU_MEMORY_PER_WEIGHT_BYTE = 1.2;

export interface GpuClass {
  gpuType: "A10G" | "L40S";
  memoryBytes: number;
  /** Memory bandwidth: A10G 600 GB/s (https://www.baseten.co/blog/nvidia-a10-vs-a10g-for-ml-model-inference/), L40S 864 GB/s (NVIDIA L40S data sheet, https://www.itcreations.com/nvidia-gpu/nvidia-l40s-gpu-accelerator). */
  memoryBytesPerSecond: number;
}

const GIB = 2 ** 30;
export const GPU_CLASSES: Record<GpuClass["gpuType"], GpuClass> = {
  A10G: {
    gpuType: "A10G",
    memoryBytes: HOST_PROFILES["g5.xlarge"].gpu.memoryGiB * GIB,
    memoryBytesPerSecond: 600e9,
  },
  L40S: {
    gpuType: "L40S",
    memoryBytes: HOST_PROFILES["g6e.xlarge"].gpu.memoryGiB * GIB,
    memoryBytesPerSecond: 864e9,
  },
};

export interface GpuPlacement {
  gpuType: GpuClass["gpuType"];
  gpus: number;
}

/**
 * The smallest of one A10G, one L40S, then 2, 4 or 8 L40S (tensor parallel wants a power of
 * two) whose memory holds the model. A10G multi-GPU hosts (g5.12xlarge) are not in the replay
 * fleets, so anything past one A10G goes to L40S; the fleets' 4-GPU L40S hosts (g6e.12xlarge
 * class) carry the 2- and 4-GPU replicas.
 */
export function gpuPlacement(model: CatalogueModel): GpuPlacement {
  const need = model.weightsBytes * GPU_MEMORY_PER_WEIGHT_BYTE;
  if (need <= GPU_CLASSES.A10G.memoryBytes) return { gpuType: "A10G", gpus: 1 };
  for (const gpus of [1, 2, 4, 8])
    if (need <= gpus * GPU_CLASSES.L40S.memoryBytes) return { gpuType: "L40S", gpus };
  throw new Error(`${model.id} does not fit 8 L40S`);
}

// --- Engine image ----------------------------------------------------------------------------

/**
 * vllm/vllm-openai, the vLLM OpenAI server image: 9 GB compressed as published on Docker Hub
 * (https://github.com/vllm-project/vllm/issues/7609). The model's code layers compress to
 * PHYSICS.compressedFraction["gzip-6"].code of their size, so on disk that is ~29 GB — in line
 * with the 28.6 GB that `docker images` shows for vllm-openai:latest in
 * https://github.com/vllm-project/vllm/pull/22377. The real image has tens of layers; it is
 * modelled as three equal code layers so containerd's three concurrent downloads overlap as
 * they do for a real pull (the split is an assumption, the total is not).
 */
export const ENGINE_IMAGE_COMPRESSED_BYTES = 9e9;
const ENGINE_IMAGE_LAYERS = 3;
const engineCodeBytes = ENGINE_IMAGE_COMPRESSED_BYTES / PHYSICS.compressedFraction["gzip-6"].code;

/**
 * The vLLM engine's run phase in field notes §3 (vLLM, Llama-3.2-3B: 117 s to ready), as the
 * core's calibration row states it: phase times with empty caches, and what the imports read
 * from the image. torch.compile, autotuning and CUDA-graph capture compile per layer shape and
 * batch size, not per byte of weights, so the times are kept for every model; weight loading
 * is the physics model's, from each model's bytes.
 */
const FIELD_NOTES_VLLM = VLLM_ENGINE.find((row) => row.id === "vllm/cold-empty-caches")!.scenario;
const FIELD_NOTES_ENGINE = FIELD_NOTES_VLLM.engine;

/**
 * Bytes of Python and libraries the engine reads from its image before ready: what the
 * calibrated vLLM row reads (its readFraction of its code-only image, ~0.95 GB). The rest of
 * the ~29 GB of CUDA, torch and kernels is not read at start (field notes §1's "~90% of the
 * image" holds for images the weights dominate); the weights are read whole.
 */
export const ENGINE_CODE_READ_BYTES =
  FIELD_NOTES_VLLM.image.readFraction *
  FIELD_NOTES_VLLM.image.layers.reduce((sum, layer) => sum + layer.bytes, 0);

/**
 * A vLLM sleep-level-2 snapshot discards the weights: what is left is the engine's host
 * process, 3.4 GB for the 3B model in field notes §3 (PHYSICS.engineHostProcessBytes). That
 * does not grow with the weights; under tensor parallelism each GPU has its own worker
 * process, so the snapshot is one process image per GPU.
 */
export function snapshotBytes(placement: GpuPlacement): number {
  return Math.round(PHYSICS.engineHostProcessBytes * placement.gpus);
}

/** Replicas an endpoint may scale to, and requests one replica serves at once. */
export const ENDPOINT_MAX_REPLICAS = 8;
export const ENDPOINT_CONCURRENCY = 8;

/** The replay's endpoint figures for a model (a full EndpointSpec: no fleet default needed). */
export function endpointSpecForModel(model: CatalogueModel): EndpointSpec {
  const placement = gpuPlacement(model);
  const imageBytes = model.weightsBytes + engineCodeBytes;
  return {
    gpuType: placement.gpuType,
    gpus: placement.gpus,
    concurrency: ENDPOINT_CONCURRENCY,
    image: {
      layers: [
        { bytes: Math.round(model.weightsBytes), compression: "gzip-6", content: "weights" },
        ...Array.from({ length: ENGINE_IMAGE_LAYERS }, () => ({
          bytes: Math.round(engineCodeBytes / ENGINE_IMAGE_LAYERS),
          compression: "gzip-6" as const,
          content: "code" as const,
        })),
      ],
      readFraction: (model.weightsBytes + ENGINE_CODE_READ_BYTES) / imageBytes,
    },
    engine: {
      weightsBytes: Math.round(model.weightsBytes),
      // vLLM's default safetensors loader copies tensor by tensor (field notes §3 and §4).
      loader: "sequential",
      loaderConcurrency: 1,
      initSeconds: FIELD_NOTES_ENGINE.initSeconds,
      compileSeconds: FIELD_NOTES_ENGINE.compileSeconds,
      graphCaptureSeconds: FIELD_NOTES_ENGINE.graphCaptureSeconds,
      warmupSeconds: FIELD_NOTES_ENGINE.warmupSeconds,
      warmCaches: false,
    },
    estargz: true,
    snapshot: { bytes: snapshotBytes(placement), sleepLevel: 2 },
    minReplicas: 0,
    maxReplicas: ENDPOINT_MAX_REPLICAS,
  };
}

// --- Service time ----------------------------------------------------------------------------

/**
 * Seconds a request holds a replica slot: prefill + decode. The anchor is replay-input's
 * llmServiceSeconds — an 8B model (Llama-3.1-8B, 16.06 GB) on one A10G prefills 8,000 and
 * decodes 40 tokens/s. Decode is memory-bound (every token reads all weights), so its rate
 * scales with GPU memory bandwidth × GPUs / weight bytes; prefill is compute-bound, so it
 * scales with GPUs / parameters (the GPU type's compute is left out: at these context lengths
 * prefill is a small share of a request).
 */
const ANCHOR_WEIGHTS_BYTES = 16_060_522_496;
const ANCHOR_BILLION_PARAMS = 8.03;
const ANCHOR_PREFILL_TOKENS_PER_SECOND = 8_000;
const ANCHOR_DECODE_TOKENS_PER_SECOND = 40;

export function decodeTokensPerSecond(model: CatalogueModel, placement: GpuPlacement): number {
  const bandwidth = GPU_CLASSES[placement.gpuType].memoryBytesPerSecond * placement.gpus;
  return (
    ANCHOR_DECODE_TOKENS_PER_SECOND *
    (bandwidth / GPU_CLASSES.A10G.memoryBytesPerSecond) *
    (ANCHOR_WEIGHTS_BYTES / model.weightsBytes)
  );
}

export function prefillTokensPerSecond(model: CatalogueModel, placement: GpuPlacement): number {
  return (
    ANCHOR_PREFILL_TOKENS_PER_SECOND *
    placement.gpus *
    (ANCHOR_BILLION_PARAMS / model.billionParams)
  );
}

export function serviceSeconds(
  model: CatalogueModel,
  placement: GpuPlacement,
  contextTokens: number,
  generatedTokens: number,
): number {
  return (
    contextTokens / prefillTokensPerSecond(model, placement) +
    generatedTokens / decodeTokensPerSecond(model, placement)
  );
}
