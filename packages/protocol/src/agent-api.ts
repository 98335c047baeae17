import { z } from "zod";
import {
  ScenarioEngine,
  ScenarioLayer,
  ScenarioLazy,
  ScenarioPeer,
} from "./cold-start-scenario.ts";
import { InventoryImage } from "./control-plane-api.ts";
import { ImageReference, Sha256Digest } from "./image-reference.ts";
import { AgentReplicaState } from "./replica-states.ts";
import { NodeRuntime, StartPath } from "./vocabulary.ts";

// Scheduler → agent: start, park and stop replicas, capture snapshots, read the inventory.
// Served by apps/agent over https under each host's base URL (its `agentUrl`: the agent's
// origin, or /hosts/<name> on a process serving a sim fleet), called by node-agent-client's
// AgentClient with a signature only the scheduler can make. Strings that end up in a command
// line are restricted so that they can never be read as an option (no leading '-') or split
// (no whitespace).

type AgentRoute = { method: "GET" | "POST" | "DELETE"; path: string };

/**
 * The agent's HTTP API, relative to a host's base URL. `{id}` is a replica id, one path
 * segment. The agent routes exactly these; the client calls exactly these.
 */
export const AGENT_ROUTES = {
  startReplica: { method: "POST", path: "/v1/replicas" },
  parkReplica: { method: "POST", path: "/v1/replicas/{id}/park" },
  stopReplica: { method: "DELETE", path: "/v1/replicas/{id}" },
  captureSnapshot: { method: "POST", path: "/v1/snapshots" },
  inventory: { method: "GET", path: "/v1/inventory" },
  /** One host's health (the process's own /healthz needs no signature). */
  health: { method: "GET", path: "/healthz" },
} as const satisfies Record<string, AgentRoute>;
export type AgentRouteName = keyof typeof AGENT_ROUTES;

/** `route`'s path with its parameters filled in, each encoded as one path segment. */
export function agentPath(route: AgentRouteName, params: Readonly<Record<string, string>> = {}) {
  return AGENT_ROUTES[route].path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${route}: no value for {${name}}`);
    return encodeURIComponent(value);
  });
}

/**
 * The parameters of `path` (as sent: still encoded), in order, when it is `route`'s path;
 * null when it is not. A parameter is one non-empty path segment.
 */
export function matchAgentPath(route: AgentRouteName, path: string): string[] | null {
  const template = AGENT_ROUTES[route].path.split("/");
  const given = path.split("/");
  if (given.length !== template.length) return null;
  const params: string[] = [];
  for (const [i, part] of template.entries()) {
    const segment = given[i] ?? "";
    if (/^\{\w+\}$/.test(part)) {
      if (segment === "") return null;
      params.push(segment);
    } else if (segment !== part) return null;
  }
  return params;
}

/**
 * A checkpoint to restore, by the manifest digest recorded at capture (repo@sha256:…): a tag
 * can be moved by whoever can push to the repository, a digest names the bytes the capture
 * wrote, so the node restores exactly those or nothing.
 */
export const CheckpointByDigest = ImageReference.regex(
  /^[^@]+@sha256:[0-9a-f]{64}$/,
  "expected the checkpoint by digest, such as snapshots.example.com/thaw-snapshots@sha256:<64 hex digits>",
);
/** Where a capture pushes its checkpoint: a tag in the operator's snapshot store (the digest is the answer). */
const CheckpointTag = ImageReference.refine(
  (ref) => !ref.includes("@"),
  "expected a tag to push the checkpoint to, not a digest",
);
/** An absolute HTTP path (with an optional query) on the replica's own port. */
const ReplicaHttpPath = z
  .string()
  .min(1)
  .max(512)
  .regex(/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*$/, "expected an absolute HTTP path such as /health");

/** One HTTP call to the engine inside the replica (vLLM: /sleep?level=2, /wake_up, /collective_rpc). */
export const EngineHttpCall = z
  .object({
    path: ReplicaHttpPath,
    /** JSON body, sent with POST. */
    body: z.string().max(65_536).optional(),
  })
  .strict();
export type EngineHttpCall = z.infer<typeof EngineHttpCall>;

/** When a replica counts as ready: GET http://127.0.0.1:<port><path> answers 200. */
export const ReplicaReadiness = z
  .object({
    port: z.number().int().min(1).max(65_535),
    path: ReplicaHttpPath.default("/health"),
    timeoutSeconds: z.number().int().min(1).max(7_200),
  })
  .strict();
export type ReplicaReadiness = z.infer<typeof ReplicaReadiness>;

/** First forward passes sent once the server answers (the `warmup` phase). */
export const ReplicaWarmup = z
  .object({
    path: ReplicaHttpPath,
    method: z.enum(["GET", "POST"]).default("GET"),
    body: z.string().max(65_536).optional(),
    count: z.number().int().min(1).max(64).default(1),
  })
  .strict();
export type ReplicaWarmup = z.infer<typeof ReplicaWarmup>;

/** A CRIU checkpoint of an initialised replica, as the restore path needs it. */
export const ReplicaSnapshot = z
  .object({
    snapshotId: z.uuid(),
    /** containerd checkpoint image (`ctr containers checkpoint`) in the operator's snapshot store, by digest. */
    checkpointRef: CheckpointByDigest,
    /** vLLM sleep level at capture: 1 keeps weights in host memory, 2 discards them. */
    sleepLevel: z.union([z.literal(1), z.literal(2)]),
    wake: EngineHttpCall.default({ path: "/wake_up" }),
    /** Level 2 only: reload the discarded weights after wake. */
    reloadWeights: EngineHttpCall.optional(),
    /**
     * Level 2: read the image's weight files into the page cache while CRIU restores, so the
     * reload copies from memory (the scheduler's choice where it pays; absent: no). On a host
     * that reports a GPU Memory Service, straight into device memory, which the woken engine
     * maps (only the sim runtime models such hosts; the containerd runtime reports none).
     */
    stageWeights: z.boolean().optional(),
  })
  .strict();
export type ReplicaSnapshot = z.infer<typeof ReplicaSnapshot>;

/**
 * What a simulated host (`sim` runtime) needs to model a start of this deployment: the
 * cold-start model's scenario blocks (packages/core/src/cold-start-model/scenario-schema.ts),
 * minus what the host itself decides (its figures, whether the image is cached, whether the
 * snapshot is local, whether compile caches are warm). Ignored by the containerd runtime.
 */
export const ReplicaSimulation = z
  .object({
    /** The image's layers (uncompressed bytes); the eStargz variant has the same layers. */
    layers: z.array(ScenarioLayer).min(1).max(256),
    /** Share of the image read before ready. */
    readFraction: z.number().min(0).max(1).default(0.9),
    /** The engine profile; `warmCaches` is the host's business (a first start compiles). */
    engine: ScenarioEngine.omit({ warmCaches: true }),
    /** stargz-snapshotter settings of the lazy path (the node's defaults otherwise). */
    lazy: ScenarioLazy.partial().optional(),
    /** The restore path: the snapshot's size, reload readers and what it is bound to. */
    snapshot: z
      .object({
        bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).default(3_400_000_000),
        reloadConcurrency: z.number().int().min(1).max(256).default(1),
        /** A snapshot restores only on the GPU model, driver and CUDA version it was captured on. */
        gpuModel: z.string().max(64).optional(),
        driverVersion: z.string().max(32).optional(),
        cudaVersion: z.string().max(32).optional(),
      })
      .strict()
      .optional(),
    /** The peer path: the source's host figures and load, as the control plane knows them. */
    peer: ScenarioPeer.partial().optional(),
  })
  .strict();
export type ReplicaSimulation = z.infer<typeof ReplicaSimulation>;

/**
 * The peer path's source: a serving replica of the same deployment on another node, chosen by
 * the scheduler. The engine receives its weights (and kernel caches) from it through
 * ModelExpress; the agent passes on the source's identity for the logs and the source
 * selection, never an address to dial: the engines find each other through the operator's
 * ModelExpress server, which knows only replicas that registered with it.
 */
export const PeerSourceRef = z
  .object({
    replicaId: z.uuid(),
    /** The source's node, as the control plane names it (for the phase's attributes). */
    nodeName: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "expected a node name"),
    /** Both hosts have an RDMA fabric (EFA): the copy goes GPU to GPU over it, else over TCP. */
    rdma: z.boolean(),
    /** Copy the compiled-kernel caches too (default yes). */
    kernelCaches: z.boolean().default(true),
    /**
     * Mount the deployment's eStargz variant (its weights layers never fetched) rather than
     * pull the plain image: the scheduler's model found it faster on this host.
     */
    lazyImage: z.boolean().default(false),
  })
  .strict();
export type PeerSourceRef = z.infer<typeof PeerSourceRef>;

/**
 * The deployment's compiled-kernel caches (vLLM's VLLM_CACHE_ROOT: torch.compile's artifacts
 * with Inductor's and Triton's caches inside; FlashInfer's and DeepGEMM's JIT caches) for the
 * node's GPU model and driver, in the operator's store. The agent mounts a cache directory
 * into the engine's container either way; with `fetch` it first fills it from the store, with
 * `capture` it packs it once the replica is ready and pushes it there, reporting the digest as
 * telemetry (KernelCacheCapturedReport). Pull and lazy starts only: their engines compile.
 */
export const KernelCacheInstruction = z
  .object({
    /** The stored cache to fetch before the engine starts, by the digest its capture recorded. */
    fetch: z
      .object({
        kernelCacheId: z.uuid(),
        ref: CheckpointByDigest,
        bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
      })
      .strict()
      .optional(),
    /** None is stored for this GPU and driver: push the one this start compiles here (a tag). */
    capture: z.object({ kernelCacheId: z.uuid(), ref: CheckpointTag }).strict().optional(),
  })
  .strict()
  .refine((k) => (k.fetch === undefined) !== (k.capture === undefined), {
    message: "a kernel-cache instruction either fetches a stored cache or captures one",
  });
export type KernelCacheInstruction = z.infer<typeof KernelCacheInstruction>;

const hasControlCharacter = (s: string) =>
  [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
/** One line of printable text: a credential that could split a header or a config line is refused. */
const credentialText = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((s) => !hasControlCharacter(s), "control characters are not allowed");

/**
 * A pull credential for one registry, handed to the agent with one start and used for that
 * start's pull only. Short-lived by design: the control plane opens the org's stored credential
 * (or trades an ECR key for a registry token, valid 12 hours) at dispatch time and sends it in
 * the signed request; it is never put in a queue payload, never persisted by the agent beyond
 * the pull (the lazy path leaves it where stargz-snapshotter reads it, see apps/agent/README.md)
 * and never logged.
 */
export const RegistryAuth = z
  .object({
    /** The image reference's registry: host[:port] as in the reference, or docker.io. */
    registry: z
      .string()
      .max(260)
      .regex(
        /^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]{1,5})?$/,
        "expected a registry host such as registry.example.com, localhost:5000 or docker.io",
      ),
    username: credentialText(256),
    /** A password or registry token (an ECR token is ~2 KB). */
    password: credentialText(16_384),
    /** When the password stops working (an ECR token); absent for a stored password. */
    expiresAt: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();
export type RegistryAuth = z.infer<typeof RegistryAuth>;

/** What the agent needs of a deployment to start a replica of it. */
export const ReplicaDeployment = z
  .object({
    deploymentId: z.uuid().optional(),
    imageRef: ImageReference,
    /** When set, the image is pulled by digest (deployments are immutable). */
    imageDigest: Sha256Digest.optional(),
    estargzImageRef: ImageReference.optional(),
    estargzImageDigest: Sha256Digest.optional(),
    snapshot: ReplicaSnapshot.optional(),
    /** Replaces the image's entrypoint and command. */
    args: z.array(z.string().max(4_096)).max(256).optional(),
    env: z
      .record(
        z
          .string()
          .max(128)
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/),
        z.string().max(4_096),
      )
      .refine((env) => Object.keys(env).length <= 256, "at most 256 environment variables")
      .default({}),
    /** Create the container with what CRIU needs, so that a snapshot can be captured from it. */
    checkpointable: z.boolean().default(false),
    /** Simulated hosts only: the deployment's figures for the cold-start model. */
    simulation: ReplicaSimulation.optional(),
  })
  .strict();
export type ReplicaDeployment = z.infer<typeof ReplicaDeployment>;

export const StartReplicaRequest = z
  .object({
    replicaId: z.uuid(),
    coldStartId: z.uuid(),
    path: StartPath,
    deployment: ReplicaDeployment,
    gpus: z
      .array(z.number().int().min(0).max(63))
      .max(64)
      .refine((gpus) => new Set(gpus).size === gpus.length, "a GPU index appears twice")
      .default([]),
    readiness: ReplicaReadiness,
    warmup: ReplicaWarmup.optional(),
    /** warm path: the idle (parked) replica to hand over. */
    warmReplicaId: z.uuid().optional(),
    /** wake path: the sleeping replica to wake (on the GPUs it slept on). */
    sleepingReplicaId: z.uuid().optional(),
    /**
     * peer path: the serving replica the weights and kernel caches come from. restore path
     * (a sleep-level-2 snapshot): the one whose weights the woken engine's reload receives.
     */
    peerSource: PeerSourceRef.optional(),
    /** pull and lazy paths: the stored kernel cache to fetch, or the one to capture. */
    kernelCache: KernelCacheInstruction.optional(),
    /**
     * Pull credentials for the registries of this start's images (pull and lazy paths), at
     * most one per registry; short-lived, never persisted (RegistryAuth). Absent: anonymous.
     */
    registryAuth: z
      .array(RegistryAuth)
      .max(4)
      .refine(
        (auths) => new Set(auths.map((a) => a.registry.toLowerCase())).size === auths.length,
        "a registry appears twice",
      )
      .optional(),
  })
  .strict()
  .superRefine((request, ctx) => {
    const need = (ok: boolean, path: (string | number)[], message: string) => {
      if (!ok) ctx.addIssue({ code: "custom", path, message });
    };
    need(
      request.path !== "lazy" || request.deployment.estargzImageRef !== undefined,
      ["deployment", "estargzImageRef"],
      "the lazy path needs the deployment's eStargz image",
    );
    need(
      request.path !== "restore" || request.deployment.snapshot !== undefined,
      ["deployment", "snapshot"],
      "the restore path needs a snapshot",
    );
    need(
      (request.path === "warm") === (request.warmReplicaId !== undefined),
      ["warmReplicaId"],
      "warmReplicaId is required by the warm path and only allowed there",
    );
    need(
      (request.path === "wake") === (request.sleepingReplicaId !== undefined),
      ["sleepingReplicaId"],
      "sleepingReplicaId is required by the wake path and only allowed there",
    );
    need(
      request.path !== "peer" || request.peerSource !== undefined,
      ["peerSource"],
      "the peer path needs a peerSource",
    );
    need(
      request.peerSource === undefined ||
        request.path === "peer" ||
        (request.path === "restore" && request.deployment.snapshot?.sleepLevel === 2),
      ["peerSource"],
      "peerSource is only allowed on the peer path and on a restore of a sleep-level-2 snapshot",
    );
    need(
      request.kernelCache === undefined || request.path === "pull" || request.path === "lazy",
      ["kernelCache"],
      "kernelCache is only allowed on the pull and lazy paths (the others do not compile)",
    );
  });
export type StartReplicaRequest = z.infer<typeof StartReplicaRequest>;
export type StartReplicaRequestInput = z.input<typeof StartReplicaRequest>;

/**
 * Keep a ready replica idle for later, optionally putting its engine to sleep. `gpus: "hold"`
 * (default): it keeps its GPUs, for a warm handover. `gpus: "release"`: its engine sleeps and
 * its GPUs go back to the host for other replicas; it holds host memory (its weights, at
 * sleep level 1) until a start on the wake path wakes it on those same GPUs.
 */
export const ParkReplicaRequest = z
  .object({
    replicaId: z.uuid(),
    /** e.g. vLLM { path: "/sleep?level=1" } before the task is paused ... */
    engineSleep: EngineHttpCall.optional(),
    /** ... and { path: "/wake_up" } after it is resumed. */
    engineWake: EngineHttpCall.optional(),
    gpus: z.enum(["hold", "release"]).default("hold"),
    /** With `gpus: "release"`: the level engineSleep puts the engine to (1 keeps its weights in host RAM). */
    sleepLevel: z.union([z.literal(1), z.literal(2)]).optional(),
    /**
     * Level 2: calls made in order after the wake, e.g. vLLM's reload_weights then
     * reset_prefix_cache (the discarded weights read again, the stale prefix cache dropped).
     */
    engineAfterWake: z.array(EngineHttpCall).max(4).optional(),
  })
  .strict()
  .refine((r) => (r.engineSleep === undefined) === (r.engineWake === undefined), {
    message: "engineSleep and engineWake go together",
    path: ["engineWake"],
  })
  .refine((r) => r.gpus === "hold" || (r.engineSleep !== undefined && r.sleepLevel !== undefined), {
    message:
      "releasing the GPUs needs an engine put to sleep: engineSleep, engineWake and sleepLevel",
    path: ["gpus"],
  })
  .refine((r) => r.engineAfterWake === undefined || r.sleepLevel === 2, {
    message: "engineAfterWake is for sleep level 2 only (level 1 keeps the weights)",
    path: ["engineAfterWake"],
  });
export type ParkReplicaRequest = z.infer<typeof ParkReplicaRequest>;
export type ParkReplicaRequestInput = z.input<typeof ParkReplicaRequest>;

/** Capture a CRIU snapshot of a ready replica; the replica is stopped afterwards. */
export const CaptureSnapshotRequest = z
  .object({
    replicaId: z.uuid(),
    snapshotId: z.uuid(),
    checkpointRef: CheckpointTag,
    sleepLevel: z.union([z.literal(1), z.literal(2)]),
    /** Defaults to vLLM's POST /sleep?level=<sleepLevel>. */
    engineSleep: EngineHttpCall.optional(),
    /** Push the checkpoint image to the snapshot store so other nodes can restore it. */
    push: z.boolean().default(true),
  })
  .strict();
export type CaptureSnapshotRequest = z.infer<typeof CaptureSnapshotRequest>;
export type CaptureSnapshotRequestInput = z.input<typeof CaptureSnapshotRequest>;

// Answers. Every 4xx/5xx answer is an AgentErrorBody (agent-errors.ts).

/** 202: the start was accepted and runs in the background; phases arrive as telemetry. */
export const StartReplicaResponse = z.object({
  replicaId: z.uuid(),
  coldStartId: z.uuid(),
  path: StartPath,
  acceptedAt: z.iso.datetime(),
});
export type StartReplicaResponse = z.infer<typeof StartReplicaResponse>;

export const ParkReplicaResponse = z.object({
  replicaId: z.uuid(),
  state: AgentReplicaState.extract(["warm", "sleeping"]),
});
export type ParkReplicaResponse = z.infer<typeof ParkReplicaResponse>;

export const StopReplicaResponse = z.object({
  replicaId: z.uuid(),
  /** False when the node did not know the replica (stop is idempotent). */
  found: z.boolean(),
  signal: z.enum(["SIGTERM", "SIGKILL"]).nullable(),
  seconds: z.number().min(0),
});
export type StopReplicaResponse = z.infer<typeof StopReplicaResponse>;

export const CaptureSnapshotResponse = z.object({
  snapshotId: z.uuid(),
  checkpointRef: z.string(),
  /** The checkpoint image's manifest digest as written (and pushed): what restores fetch by. */
  digest: Sha256Digest,
  seconds: z.number().min(0),
  pushed: z.boolean(),
});
export type CaptureSnapshotResponse = z.infer<typeof CaptureSnapshotResponse>;

export const AgentInventory = z.object({
  node: z.object({
    name: z.string(),
    nodeId: z.uuid().nullable(),
    runtime: NodeRuntime,
    agentVersion: z.string(),
  }),
  gpus: z.object({
    total: z.number().int().min(0),
    free: z.number().int().min(0),
    used: z.number().int().min(0),
    held: z.array(z.object({ index: z.number().int().min(0), replicaId: z.uuid() })),
  }),
  /** Start paths this host can serve at all (lazy needs stargz-snapshotter, restore CRIU). */
  capabilities: z.object({ paths: z.array(StartPath) }),
  images: z.array(InventoryImage),
  snapshotIds: z.array(z.uuid()),
  warmReplicaIds: z.array(z.uuid()),
  sleepingReplicaIds: z.array(z.uuid()).default([]),
  replicas: z.array(
    z.object({
      replicaId: z.uuid(),
      containerId: z.string(),
      state: AgentReplicaState,
      coldStartId: z.uuid().optional(),
      path: StartPath.optional(),
      gpus: z.array(z.number().int().min(0)),
    }),
  ),
});
export type AgentInventory = z.infer<typeof AgentInventory>;

/** GET /healthz: the process's (or one host's) state and nothing else. */
export const AgentHealth = z.object({ status: z.enum(["ok", "draining"]) });
export type AgentHealth = z.infer<typeof AgentHealth>;
