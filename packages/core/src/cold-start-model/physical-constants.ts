import type { LayerCompression, LayerContent } from "./scenario-schema";
import type { Phase } from "../vocabulary/index";

// Every number the model uses that is not in the scenario. Each is one physical quantity,
// set once for all calibration rows; the comment says what it is and where it comes from.
// "Fitted" means: chosen inside its physical range so the calibration rows agree.

type ByContent = Record<LayerContent, number>;

export const PHYSICS = {
  // --- network ---------------------------------------------------------------------------
  /** Payload share of the NIC's line rate (TCP/IP + TLS framing, ENA). */
  nicGoodputFraction: 0.9,
  /**
   * One HTTPS blob stream from the registry. Fitted (GPT-OSS rows 1 and 5, which pull the
   * 12 GB weights layer through a single GET); inside the 40-90 MB/s that one registry or
   * S3 connection delivers (AWS: "one request per 85-90 MB/s of desired throughput").
   */
  registryStreamBytesPerSecond: 50e6,
  /** Token, manifest, config, blob redirect before the first layer byte. */
  registrySetupRoundTrips: 4,
  /** containerd CRI `max_concurrent_downloads` default. */
  pullMaxConcurrentDownloads: 3,
  /** Parallel ranged GETs of a snapshot from the object store (s5cmd / AWS CRT class clients). */
  snapshotFetchStreams: 16,

  // --- compression ------------------------------------------------------------------------
  /** Compressed / uncompressed size. Quantized weights are high entropy: gzip -9 saves 1-2% (field notes). */
  compressedFraction: {
    "gzip-9": { weights: 0.985, code: 0.3, data: 0.5 },
    "gzip-6": { weights: 0.987, code: 0.31, data: 0.52 },
    "gzip-0": { weights: 1, code: 1, data: 1 },
    zstd: { weights: 0.99, code: 0.3, data: 0.5 },
    none: { weights: 1, code: 1, data: 1 },
  } satisfies Record<LayerCompression, ByContent>,
  /**
   * Output bytes per second one core decompresses (Go's compress/gzip: containerd and
   * stargz-snapshotter are Go). Measured here with Go on a 2-vCPU EPYC sandbox: high-entropy
   * 4-bit data gzip -9 62 MB/s, a Python stdlib tar 165-197 MB/s, stored (level 0) blocks
   * 4.3 GB/s; zstd CLI 450-590 MB/s. Literal-heavy streams (weights) are the slow case;
   * level barely changes inflate speed. The gzip rows are fitted (fidelity suite, with the
   * field-notes rows held within ±10%): 0.7x of the ~1.5x Ice Lake scaling first assumed,
   * which puts them at the 2-vCPU measurement's level.
   */
  decompressBytesPerSecondPerCore: {
    "gzip-9": { weights: 70e6, code: 210e6, data: 175e6 },
    "gzip-6": { weights: 70e6, code: 210e6, data: 175e6 },
    "gzip-0": { weights: 4e9, code: 4e9, data: 4e9 },
    zstd: { weights: 850e6, code: 650e6, data: 650e6 },
    none: { weights: 10e9, code: 10e9, data: 10e9 },
  } satisfies Record<LayerCompression, ByContent>,

  // --- block device -----------------------------------------------------------------------
  /** One sequential reader on EBS (Run:ai streamer at concurrency 1: 315-343 MB/s on gp3 and io2). */
  defaultDiskReadStreamMiBps: 320,

  // --- page cache -------------------------------------------------------------------------
  /**
   * One buffered reader (an mmap'd safetensors file faulted in page by page, or read()
   * copying to user space) of bytes the kernel already holds: bound by page faults and one
   * core's memcpy, not by the device. Every buffered read passes through it, so it also caps
   * one reader of a device faster than one core can copy. Fitted (fidelity suite: hot
   * safetensors loads of 26-65 GB imply 4.3-7 GB/s on A100 and H100 hosts).
   */
  pageCacheReaderBytesPerSecond: 4.2e9,
  /**
   * Many readers of cached bytes together. Fitted to its physical floor: fastsafetensors'
   * 8 threads load a cached 26 GB in 4.7 s (5.5 GB/s) on its team's A100 host, far below
   * memory bandwidth, so what binds there is the loader's copy pipeline, not DRAM. (The
   * suite's fit would take it to ~5.5 GB/s, which puts fastsafetensors' NVMe loads ~29% too
   * fast: kept here.)
   */
  pageCacheReadBytesPerSecond: 5e9,
  /**
   * Host RAM when a scenario does not state it: 32 GiB, the memory of the common single-GPU
   * inference hosts (g5.2xlarge, g6.2xlarge, g6e.xlarge). It decides whether the bytes a start
   * wrote are still cached when the engine reads them back (engine-phases.ts).
   */
  defaultHostMemoryGiB: 32,

  // --- lazy pulling (stargz-snapshotter over FUSE) -----------------------------------------
  /** Kernel <-> FUSE daemon round trip per request (context switches, copies). */
  fuseRequestSeconds: 100e-6,
  /** Reads of already-cached chunks through FUSE without passthrough. */
  fuseLocalReadBytesPerSecond: 2e9,
  /** Mean size of a file Python's imports open (modules, small .so); wheels are mostly small files. */
  importedFileMeanBytes: 48 * 1024,
  /** lookup + getattr + open + flush per imported file, each a FUSE request. */
  fuseMetadataRequestsPerImportedFile: 4,
  /** Resolve, footer, TOC per layer (layers mount in parallel). */
  stargzMountRoundTrips: 3,

  // --- container and engine ---------------------------------------------------------------
  /** runc create: overlay mount, namespaces, cgroups. */
  containerCreateSeconds: 1,
  /**
   * Open the weight files, parse safetensors headers, allocate parameters and staging
   * buffers. Fitted (fidelity suite): small loads (1.5 GB woken in 0.85 s) leave little room
   * for it; the Run:ai io2 plateau (7.53-7.61 s where 15 GB at 2 GiB/s is 6.99 s) allows it.
   */
  loaderSetupSeconds: 0.15,
  /**
   * cudaMemcpy from pageable memory stages through a pinned bounce buffer: about half the
   * pinned rate; the fit (fidelity suite, vLLM sleep-mode wakes) lands on it.
   */
  pageableCopyFraction: 0.5,
  /**
   * A sleep-level-1 wake from a pinned host backup (`restore.hostBackup: "pinned"`) copies it
   * back allocation by allocation: this share of the pinned rate. Fitted (fidelity suite):
   * vLLM wakes on A100 and H100 and SGLang's staged-hugepage wake on a B200 (38 GB/s of a
   * ~50 GB/s link).
   */
  wakeCopyFraction: 0.75,
  /** A chunked pinned reload's first chunk is read before any copy overlaps (notes: 512 MB chunks). */
  reloadChunkBytes: 512 * 1024 * 1024,
  /**
   * Share of each engine phase left when compile / kernel caches are warm: loading hundreds
   * of cached artefacts, re-capturing CUDA graphs (they hold device addresses), real forward
   * passes. Fitted to vLLM's ~27 s with persisted caches vs 117 s cold.
   */
  warmCacheResidualFraction: { compile: 0.1, graphCapture: 0.1, warmup: 0.1 },

  // --- restore (CRIU + cuda-checkpoint) ---------------------------------------------------
  /**
   * Process tree, namespaces, fds, TCP repair, before memory pages. Fitted (fidelity suite:
   * NVIDIA Dynamo's restores of 1.5-145 GB images, with the field notes' 2.5 s restore of a
   * 3.4 GB image held within ±10%).
   */
  criuBaseSeconds: 2.2,
  /** CRIU restores pages with preadv into the new address space: page-fault and copy bound. Fitted, as above. */
  criuPageRestoreBytesPerSecond: 4.5e9,
  /** cuda-checkpoint --toggle with little device memory (sleep levels 1 and 2). */
  cudaToggleSeconds: 0.3,
  /**
   * Device memory cuda-checkpoint puts back, after CRIU has restored those bytes as pages.
   * Fitted (fidelity suite): NVIDIA Dynamo's CRIU + CUDA restore stages of 1.5-145 GB of
   * GPU state on B200s (driver 595) together run at 3.5-4 GB/s, which CRIU's page rate
   * mostly explains; this share lands at its prior, a pinned PCIe copy. The field notes'
   * older "restores ~12 GB of GPU state slowly" gives no figure.
   */
  cudaCheckpointRestoreBytesPerSecond: 26e9,
  /** Host memory of an initialised inference server (the sleep-level-2 image: 3.4 GB). */
  engineHostProcessBytes: 3.4e9,
  /**
   * Wake: re-allocate the KV cache, first forward pass with captured graphs. Fitted (vLLM
   * sleep-mode wakes of 0.26-0.82 s on A100, 0.59 s on H100; Dynamo's smallest remap).
   */
  engineWakeSeconds: 0.18,
  /**
   * After cuda-checkpoint puts GPU state back, the engine maps its weights' device memory
   * again (CUDA virtual memory: create, map and set access per 2 MiB granule), a cost per
   * byte: NVIDIA Dynamo's "wake / remap" stage grows with the weights (0.17 s at 1.5 GB,
   * 2.8 s at 145 GB). A sleep-mode wake maps as it copies, so the copy is its cost. Fitted
   * (fidelity suite).
   */
  deviceRemapBytesPerSecond: 54e9,

  // --- peer -------------------------------------------------------------------------------
  /**
   * Payload share of one GPU's RDMA rail in a peer copy: ModelExpress measured 26.1 GB/s for
   * one reader on a 400 Gbps ConnectX-7 rail (ai-dynamo/modelexpress docs/DEPLOYMENT.md, "NIC
   * pinning"), 52% of its 50 GB/s.
   */
  rdmaGoodputFraction: 0.52,
  /**
   * One TCP flow between two EC2 instances outside a cluster placement group: "Bandwidth for
   * single-flow traffic is limited to 5 Gbps when instances are not in the same cluster
   * placement group" (EC2 User Guide, instance network bandwidth).
   */
  tcpFlowBytesPerSecond: 5e9 / 8,
  /** Parallel TCP streams of one peer copy (assumed: NIXL's UCX TCP transport, several lanes). */
  peerTcpFlows: 8,
  /**
   * Before the first byte: the NIXL agents find each other through the ModelExpress server and
   * register the weights' device memory. ModelExpress: registration 8.16 s per tensor, 1.14 s
   * with pool registration (MX_POOL_REG=1, what Thaw's agents set), 0.79 s with a VMM arena
   * (docs/BENCHMARKS.md); plus a metadata round trip.
   */
  peerSetupSeconds: 1.2,
  /**
   * Compiled-kernel caches of one engine (Triton, torch.compile's artifacts, FlashInfer and
   * DeepGEMM JIT objects). Assumed: no published size was found; files of hundreds of MB.
   */
  defaultKernelCacheBytes: 500e6,

  // --- warm -------------------------------------------------------------------------------
  /** Thaw a paused replica and pass its readiness probe. */
  handoverSeconds: 0.5,

  // --- noise and failures -----------------------------------------------------------------
  /** Lognormal sigma of each phase's multiplicative noise: network phases vary most. */
  noiseSigmaByPhase: {
    queue: 0.2,
    provision: 0.15,
    handover: 0.2,
    fetch_snapshot: 0.15,
    restore: 0.08,
    pull: 0.15,
    prefetch: 0.2,
    create: 0.1,
    start: 0.08,
    load_weights: 0.1,
    peer_transfer: 0.15,
    fetch_kernel_cache: 0.15,
    compile: 0.05,
    graph_capture: 0.05,
    warmup: 0.05,
    ready: 0,
  } satisfies Record<Phase, number>,
  /** Noise draws are clamped to this many sigmas so a factor stays bounded. */
  noiseClampSigmas: 3,
  /** A stalled pull is cancelled by containerd's `image_pull_progress_timeout` (5 min). */
  pullStallSeconds: 300,
};

export type Physics = typeof PHYSICS;
