import os from "node:os";
import path from "node:path";
import { type Logger, pino } from "pino";
import { type ContainerdApi } from "./api/containerd-api.ts";
import { DEFAULT_TOOL_PATHS, type ToolPaths } from "./commands.ts";

/** The stargz-snapshotter settings the agent's own deadlines must agree with (field notes §2). */
export interface StargzSettings {
  /** Name of the proxy snapshotter plugin in containerd's config. */
  snapshotter: string;
  /** = prefetch_timeout_sec in containerd-stargz-grpc's config.toml. */
  prefetchTimeoutSeconds: number;
  /** The snapshotter's Prometheus endpoint (metrics_address), to tell whether prefetch completed. */
  metricsUrl?: string;
  /**
   * The docker config the snapshotter reads registry credentials from ($DOCKER_CONFIG/config.json
   * of containerd-stargz-grpc; infra/agent points DOCKER_CONFIG at tmpfs the agent may write).
   */
  dockerConfigPath: string;
}

export interface ContainerdTimeouts {
  /** Listing and inspecting (ctr tasks ls, content get, ...). */
  querySeconds: number;
  pullSeconds: number;
  /** ctr-remote rpull: mounts every layer, each waiting up to the prefetch budget. */
  remotePullSeconds: number;
  /** `ctr run -d` (container, task, start) and `containers create`. */
  createSeconds: number;
  fetchSnapshotSeconds: number;
  restoreSeconds: number;
  cudaToggleSeconds: number;
  engineCallSeconds: number;
  checkpointSeconds: number;
  pushSeconds: number;
  /** A stored kernel cache's fetch and unpack; past it the engine compiles (it only accelerates). */
  kernelCacheFetchSeconds: number;
}

export interface ContainerdRuntimeConfig {
  /** containerd's gRPC socket. */
  address: string;
  namespace?: string;
  tools?: Partial<ToolPaths>;
  /** Environment of the tools the runtime runs (tests put fake tools first on PATH). */
  toolEnv?: NodeJS.ProcessEnv;
  /** Container stdout/stderr files, one per container (quoted in start failures). */
  logDir: string;
  /** Registry hosts reached over plain HTTP, e.g. "127.0.0.1:5000". */
  plainHttpRegistries?: string[];
  /** Where a pull's private hosts directory (its registry credential) lives while it runs. */
  pullAuthDir?: string;
  /** Where a restore mounts the image to stage its weights (default: the OS temp dir). */
  stagingDir?: string;
  stargz?: Partial<StargzSettings>;
  /** CRIU options file runc reads for checkpointable containers (infra/agent/criu/runc.conf). */
  criuConfigPath?: string;
  /** Where kernel settings are read (tests point it at a fake tree). */
  procSysDir?: string;
  /** SIGTERM first; SIGKILL after this many seconds. */
  stopGraceSeconds?: number;
  timeouts?: Partial<ContainerdTimeouts>;
  /** containerd's API client, when it is made elsewhere (unit tests: a fake containerd). */
  api?: ContainerdApi;
  /** The operator's ModelExpress server: engines load through it, and the peer path is open. */
  modelExpress?: ModelExpressSettings;
  /**
   * Where each deployment's kernel-cache directory lives (<agent state dir>/kernel-caches: it
   * outlives the replicas, so a later start of the deployment here compiles warm). Default:
   * thaw-kernel-caches under the OS temp dir.
   */
  kernelCacheDir?: string;
  /** Where the runtime logs what does not fail a start (a kernel-cache fetch that failed). */
  log?: Logger;
}

export interface ModelExpressSettings {
  /** host:port of its gRPC service (MX_SERVER_ADDRESS). */
  serverAddress: string;
  /** The host has an EFA fabric: NIXL uses libfabric over it, else UCX (TCP). */
  rdma: boolean;
}

export interface ResolvedContainerdConfig {
  address: string;
  namespace: string;
  tools: ToolPaths;
  toolEnv: NodeJS.ProcessEnv | undefined;
  logDir: string;
  plainHttpRegistries: string[];
  pullAuthDir: string;
  stagingDir: string;
  stargz: StargzSettings;
  criuConfigPath: string;
  procSysDir: string;
  stopGraceSeconds: number;
  timeouts: ContainerdTimeouts;
  api: ContainerdApi | undefined;
  modelExpress: ModelExpressSettings | undefined;
  kernelCacheDir: string;
  log: Logger;
}

/** The tuned values of infra/agent/containerd-stargz-grpc/config.toml (a test keeps them equal). */
export const STARGZ_TUNED = {
  prefetchTimeoutSeconds: 30,
  requestTimeoutSeconds: 300,
  fetchingTimeoutSeconds: 300,
  lazyChunkSizeBytes: 50_000,
  prefetchChunkSizeBytes: 33_554_432,
  maxCacheFds: 100,
} as const;

const DEFAULT_TIMEOUTS: ContainerdTimeouts = {
  querySeconds: 30,
  pullSeconds: 3_600,
  remotePullSeconds: 1_800,
  createSeconds: 120,
  fetchSnapshotSeconds: 3_600,
  restoreSeconds: 900,
  cudaToggleSeconds: 600,
  engineCallSeconds: 900,
  checkpointSeconds: 1_800,
  pushSeconds: 3_600,
  kernelCacheFetchSeconds: 600,
};

export function resolveContainerdConfig(config: ContainerdRuntimeConfig): ResolvedContainerdConfig {
  const stargz: StargzSettings = {
    snapshotter: config.stargz?.snapshotter ?? "stargz",
    prefetchTimeoutSeconds:
      config.stargz?.prefetchTimeoutSeconds ?? STARGZ_TUNED.prefetchTimeoutSeconds,
    ...(config.stargz?.metricsUrl ? { metricsUrl: config.stargz.metricsUrl } : {}),
    dockerConfigPath:
      config.stargz?.dockerConfigPath ?? "/run/containerd-stargz-grpc/docker/config.json",
  };
  const timeouts = { ...DEFAULT_TIMEOUTS, ...config.timeouts };
  // The agent must never give up on rpull before the snapshotter gives up on prefetch:
  // that would turn a slow-but-working prefetch into a failed start.
  if (timeouts.remotePullSeconds <= stargz.prefetchTimeoutSeconds) {
    throw new Error(
      `containerd runtime: timeouts.remotePullSeconds (${timeouts.remotePullSeconds}) must exceed the stargz prefetch timeout (${stargz.prefetchTimeoutSeconds})`,
    );
  }
  // Absolute, and no comma: it is the source of a `--mount type=bind,src=…,…` option.
  const kernelCacheDir = path.resolve(
    config.kernelCacheDir ?? path.join(os.tmpdir(), "thaw-kernel-caches"),
  );
  if (kernelCacheDir.includes(",")) {
    throw new Error(
      `containerd runtime: kernelCacheDir ${kernelCacheDir} must not contain a comma`,
    );
  }
  return {
    address: config.address,
    namespace: config.namespace ?? "thaw",
    tools: { ...DEFAULT_TOOL_PATHS, ...config.tools },
    toolEnv: config.toolEnv,
    // Absolute: it becomes a file:// log URI that the shim opens.
    logDir: path.resolve(config.logDir),
    plainHttpRegistries: config.plainHttpRegistries ?? [],
    pullAuthDir: config.pullAuthDir ?? os.tmpdir(),
    stagingDir: config.stagingDir ?? path.join(os.tmpdir(), "thaw-staging"),
    stargz,
    criuConfigPath: config.criuConfigPath ?? "/etc/thaw/criu/runc.conf",
    procSysDir: config.procSysDir ?? "/proc/sys",
    stopGraceSeconds: config.stopGraceSeconds ?? 10,
    timeouts,
    api: config.api,
    modelExpress: config.modelExpress,
    kernelCacheDir,
    log: config.log ?? pino({ enabled: false }),
  };
}
