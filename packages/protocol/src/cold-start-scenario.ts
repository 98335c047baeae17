import { z } from "zod";

// The blocks of the cold-start model's scenario (the `sim:coldstart` contract of
// docs/bench-contracts.md, assembled in packages/core/src/cold-start-model/scenario-schema.ts)
// that a start request carries to a simulated host (ReplicaSimulation). A public contract:
// add optional fields, never rename. Every object is strict so a typo is an error that names
// the field instead of a silently ignored key. Sizes are bytes, times seconds.

const positive = z.number().positive();
const nonNegative = z.number().nonnegative();
const byteCount = z.number().int().nonnegative();

export const ScenarioHost = z
  .object({
    /** Cores available for fetch / decompress. */
    vcpus: z.number().int().positive(),
    /** Bandwidth to the registry / snapshot store. */
    networkGbps: positive,
    /** Round trip per HTTP request. */
    registryRttMs: nonNegative,
    /** Block device write ceiling. */
    diskWriteMiBps: positive,
    /** Block device read ceiling (what concurrent readers can reach). */
    diskReadMiBps: positive,
    /** Host -> GPU copy bandwidth; 0 = no GPU. */
    pcieGBps: nonNegative,
    /**
     * Extension (optional): what ONE synchronous sequential reader gets from the device,
     * bounded by readahead bytes in flight over the device latency, not by the ceiling.
     * Defaults to the network-attached EBS figure (see physical-constants.ts).
     */
    diskReadStreamMiBps: positive.optional(),
    /**
     * Extension (optional): how many workers restore a CRIU image's memory pages at once.
     * 1 (the default): stock CRIU, one preadv loop. More: a CRIU with parallel memfd restore
     * and native AIO (NVIDIA Dynamo Snapshot's patches), bound together by where the pages are.
     */
    restoreStreams: z.number().int().min(1).max(256).optional(),
    /**
     * Extension (optional): the host's engines keep their weights in a GPU Memory Service
     * (NVIDIA Dynamo's GMS: a per-GPU process owns the weights' device memory, engines map
     * it). A restore's staged weights are then loaded straight into device memory while CRIU
     * restores the process, and the woken engine maps them instead of reloading.
     */
    gpuMemoryService: z.boolean().optional(),
    /**
     * Extension (optional): host RAM. Whether the bytes a start writes (pulled layers,
     * prefetched chunks) are still in the page cache when the engine reads them depends on
     * it. Absent: the model's assumed GPU host (see physical-constants.ts).
     */
    memoryGiB: positive.optional(),
    /**
     * Extension (optional): the host's RDMA fabric (AWS EFA with GPUDirect RDMA) per GPU, in
     * Gbps: each GPU's rail (p5.48xlarge: 3,200 Gbps over 8 GPUs, 400 each). A peer copy
     * between two hosts that both have one moves GPU memory to GPU memory over each GPU's
     * rail; otherwise it goes over TCP on the primary interface. Absent: none.
     */
    rdmaGbps: nonNegative.optional(),
  })
  .strict();

export const LayerCompression = z.enum(["gzip-9", "gzip-6", "gzip-0", "zstd", "none"]);
export type LayerCompression = z.infer<typeof LayerCompression>;

/** weights: high entropy (quantized tensors); code: Python, wheels, .so; data: anything else. */
export const LayerContent = z.enum(["weights", "code", "data"]);
export type LayerContent = z.infer<typeof LayerContent>;

export const ScenarioLayer = z
  .object({
    /** Uncompressed size: what lands on disk and what the engine can read. */
    bytes: byteCount,
    compression: LayerCompression,
    content: LayerContent,
  })
  .strict();

export const ScenarioImage = z
  .object({
    format: z.enum(["oci", "estargz"]),
    layers: z.array(ScenarioLayer).min(1),
    /** Share of image bytes read before ready (imports + weights). */
    readFraction: z.number().min(0).max(1),
  })
  .strict();

export const ScenarioEngine = z
  .object({
    /** Bytes loaded before ready (0 if none). Read from the image when it has a weights layer, else from local disk. */
    weightsBytes: byteCount,
    loader: z.enum(["sequential", "concurrent"]),
    loaderConcurrency: z.number().int().positive(),
    /** Imports, CUDA context, server start, excluding weights and image reads. */
    initSeconds: nonNegative,
    /** With empty caches. */
    compileSeconds: nonNegative,
    /** With empty caches. */
    graphCaptureSeconds: nonNegative,
    /** With empty caches. */
    warmupSeconds: nonNegative,
    /** Compile / kernel caches persisted from earlier starts. */
    warmCaches: z.boolean(),
    /**
     * Extension (optional): where weights that are not in the image are when the loader
     * opens them. `disk` (the default): the files are on the local block device with a cold
     * page cache. `page-cache`: the files were read or written moments ago (downloaded just
     * before, loaded by an earlier start of the same process) and the kernel still holds
     * them in memory, so reads copy from RAM instead of waiting for the device.
     */
    weightsSource: z.enum(["disk", "page-cache"]).optional(),
  })
  .strict();

// Defaults are stargz-snapshotter's own (fs/config/config.go) except where noted: an
// unconfigured snapshotter is what a node has until someone tunes it.
export const ScenarioLazy = z
  .object({
    prefetch: z.boolean().default(true),
    /** Bytes per prefetch HTTP GET; 0 = stargz default `prefetch_chunk_size = 0`: one GET for a layer's whole prefetch range. */
    prefetchChunkBytes: byteCount.default(0),
    /** On-demand fetch granularity, stargz `[blob] chunk_size` (50000). */
    lazyChunkBytes: z.number().int().positive().default(50_000),
    /** Operation budget, stargz `prefetch_timeout_sec`: how long mounting waits for prefetch. */
    prefetchTimeoutSeconds: positive.default(10),
    /** Per-HTTP-request fetch timeout: 30 s per the field notes (a request running longer is cancelled). */
    fetchTimeoutSeconds: positive.default(30),
    /** Create-phase deadline: kubelet's `--runtime-request-timeout` (2 min) bounds CreateContainer; prefetch still in flight is cancelled. */
    createDeadlineSeconds: positive.default(120),
    /** stargz `[directory_cache] max_cache_fds` (10): bounds in-flight prefetch chunks. */
    maxCacheFds: z.number().int().positive().default(10),
  })
  .strict();

export const ScenarioRestore = z
  .object({
    /** Default: vLLM's sleep-level-2 process image from the field notes. */
    snapshotBytes: byteCount.default(3_400_000_000),
    /** false: fetched from the snapshot store first. */
    local: z.boolean().default(true),
    /** 0: GPU state in the image; 1: weights in host RAM; 2: weights discarded. */
    sleepLevel: z.union([z.literal(0), z.literal(1), z.literal(2)]).default(2),
    /** Reader threads of the weight reload after wake; 1 = vLLM's own `reload_weights`. */
    reloadConcurrency: z.number().int().positive().default(1),
    /**
     * Sleep level 1: where the weights wait. `pinned`: page-locked memory the engine (or a
     * staging daemon) registered, copied back by DMA; `pageable` (default): ordinary pages,
     * e.g. a backup a CRIU restore has just put back, staged through a bounce buffer.
     */
    hostBackup: z.enum(["pinned", "pageable"]).default("pageable"),
    /**
     * Where the image's pages are when CRIU reads them. `disk` (default): on the block device.
     * `page-cache`: captured or fetched on this host moments ago, still held by the kernel.
     * `stream` (with `local: false`): streamed from the snapshot store into the restored
     * process's memory as they arrive, never written to the disk (gVisor's restore from a GCS
     * bucket, CRIU's image streamer).
     */
    imageSource: z.enum(["disk", "page-cache", "stream"]).default("disk"),
    /**
     * Weights restored apart from the process image: while CRIU restores the process, the
     * agent reads the weight files into the page cache with `stagingReaders` readers, so the
     * engine's reload after the wake (sleep level 2) copies from memory instead of waiting for
     * the disk one tensor at a time. false (default): the reload reads where the weights are.
     */
    stageWeights: z.boolean().default(false),
    /** Reader threads of that staging (the agent's, not the engine's). */
    stagingReaders: z.number().int().min(1).max(256).default(8),
    /**
     * Sleep level 2: where the reload after the wake reads the discarded weights. `local`
     * (default): the host's files (`stageWeights` says how). `peer`: a serving replica of the
     * deployment on another host sends them into the woken engine's device memory (NVIDIA
     * ModelExpress through the engine's loader; the `peer` block gives the link), for a host
     * whose disk is slower than the network, or that lacks the weights.
     */
    weightsFrom: z.enum(["local", "peer"]).default("local"),
  })
  .strict();

// A sleeping engine (vLLM's sleep mode) keeps its process, CUDA context, compiled kernels and
// CUDA graphs; it gave back the GPU memory of its weights and KV cache. Waking it puts the
// weights back (level 1: from its host backup; level 2: read again from disk or page cache)
// and re-allocates the KV cache.
export const ScenarioWake = z
  .object({
    /** 1: the weights wait in host RAM; 2: they were discarded and are read again. */
    sleepLevel: z.union([z.literal(1), z.literal(2)]).default(1),
    /**
     * Level 1: where the weights wait. `pinned` (default): a live engine's own backup, which
     * vLLM allocates page-locked (CuMemAllocator's CPU backup with pin_memory); `pageable`:
     * ordinary pages, staged through a bounce buffer.
     */
    hostBackup: z.enum(["pinned", "pageable"]).default("pinned"),
    /** Level 2: reader threads of the weight reload; 1 = vLLM's own `reload_weights`. */
    reloadConcurrency: z.number().int().positive().default(1),
  })
  .strict();

// A peer copy (NVIDIA ModelExpress over NIXL): a serving replica of the same deployment on
// another host sends its weights from GPU memory, and separately its compiled-kernel caches
// (Triton, torch.compile, FlashInfer, DeepGEMM), to the new replica, which pulls only what it
// runs and skips reading weights from storage and compiling from cold.
export const ScenarioPeer = z
  .object({
    /** The source host's primary interface (TCP), Gbps. Default: the receiving host's. */
    sourceNetworkGbps: positive.optional(),
    /** The source host's RDMA fabric per GPU, Gbps; 0 (default): none. */
    sourceRdmaGbps: nonNegative.default(0),
    /** GPUs the replica spans: each copies its shard over its own rail and PCIe link. */
    gpus: z.number().int().min(1).max(64).default(1),
    /** The source host's host-to-GPU link per GPU, GB/s. Default: the receiving host's. */
    sourcePcieGBps: positive.optional(),
    /** Other copies the source is sending meanwhile: they share its link. */
    sourceTransfersInFlight: z.number().int().nonnegative().default(0),
    /** The source also sends its compiled-kernel caches, so the engine compiles warm. */
    kernelCaches: z.boolean().default(true),
    /** Size of those caches. Default: see physical-constants.ts. */
    kernelCacheBytes: byteCount.optional(),
  })
  .strict();

// The deployment's compiled-kernel caches (Triton, torch.compile/Inductor, FlashInfer and
// DeepGEMM JIT objects) for this host's GPU model and driver, captured after an earlier start
// anywhere in the fleet and kept in the operator's cache store: a start that compiles fetches
// them first, so compile and graph capture run warm. Absent: no cache stored.
export const ScenarioKernelCache = z
  .object({
    /** The cache's size. Default: see physical-constants.ts. */
    bytes: byteCount.optional(),
  })
  .strict();

export type ScenarioHost = z.output<typeof ScenarioHost>;
export type ScenarioPeer = z.output<typeof ScenarioPeer>;
export type ScenarioKernelCache = z.output<typeof ScenarioKernelCache>;
export type ScenarioLayer = z.output<typeof ScenarioLayer>;
export type ScenarioImage = z.output<typeof ScenarioImage>;
export type ScenarioEngine = z.output<typeof ScenarioEngine>;
export type ScenarioLazy = z.output<typeof ScenarioLazy>;
export type ScenarioRestore = z.output<typeof ScenarioRestore>;
export type ScenarioWake = z.output<typeof ScenarioWake>;
