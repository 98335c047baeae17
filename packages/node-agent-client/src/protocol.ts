import { ScenarioEngine, ScenarioLayer, ScenarioLazy } from "@thaw/core/cold-start-model";
import { IMAGE_REFERENCE } from "@thaw/core/deployments";
import { Phase, StartPath } from "@thaw/core/vocabulary";
import { z } from "zod";

// The agent protocol: the single source of truth for both sides (agent and control plane).
// Agent → control plane: join, heartbeat, telemetry under /api/agent/v1.
// Numbers are bounded so a malformed agent cannot store NaN, Infinity or absurd figures.

const finite = (max: number) => z.number().finite().min(0).max(max);

/** What a host can do, measured or from its instance profile. */
export const HostFigures = z
  .object({
    instanceType: z.string().min(1).max(64),
    gpuModel: z.string().min(1).max(64),
    gpuCount: z.number().int().min(0).max(64),
    gpuMemoryGiB: z.number().int().min(0).max(4096),
    vcpus: z.number().int().min(1).max(1024),
    networkGbps: finite(10_000),
    diskReadMiBps: finite(1_000_000),
    diskWriteMiBps: finite(1_000_000),
    pcieGBps: finite(1_000),
    registryRttMs: finite(10_000),
    driverVersion: z.string().max(32).optional(),
    cudaVersion: z.string().max(32).optional(),
  })
  .strict();
export type HostFigures = z.infer<typeof HostFigures>;

/** SHA-256 of a certificate's DER, as 64 lower-case hex digits. */
export const CertSha256 = z
  .string()
  .regex(/^[0-9a-f]{64}$/, "expected the certificate's SHA-256 as 64 lower-case hex digits");

export const JoinRequest = z
  .object({
    joinToken: z.string().min(1).max(512),
    name: z.string().min(1).max(128),
    provider: z.enum(["aws", "sim"]),
    runtime: z.enum(["containerd", "sim"]),
    instanceId: z.string().min(1).max(128).optional(),
    zone: z.string().max(64).optional(),
    agentVersion: z.string().min(1).max(64),
    /** Where the scheduler reaches this agent's HTTP API: https, with the certificate below. */
    agentUrl: z.url().max(512).optional(),
    /**
     * SHA-256 of the agent's TLS certificate (its DER, 64 hex digits): the scheduler accepts
     * no other certificate at agentUrl. Required with an agentUrl.
     */
    agentCertSha256: CertSha256.optional(),
    /**
     * An instance that joined before proves it is that node: the credential it was given
     * (kept across an agent restart). Without it, or a join token created for that node,
     * joining as an existing instance is refused.
     */
    nodeCredential: z.string().min(1).max(512).optional(),
    figures: HostFigures,
  })
  .strict();
export type JoinRequest = z.infer<typeof JoinRequest>;

export const JoinResponse = z.object({
  nodeId: z.uuid(),
  /** Per-node credential: bearer token for every later call; shown once, stored hashed. */
  credential: z.string(),
  heartbeatIntervalSeconds: z.number().int().positive(),
  /**
   * The scheduler's public key (base64 SPKI DER, Ed25519): the agent accepts a call only when
   * it is signed with the matching private key (agent-call-signature.ts).
   */
  agentCallPublicKey: z.string().min(1).max(512),
});
export type JoinResponse = z.infer<typeof JoinResponse>;

/**
 * POST /api/agent/v1/credential (with the current credential): a new credential for this
 * node. The current one keeps working until the new one is first used, so an answer lost on
 * the way costs nothing; after that only the new one does.
 */
export const CredentialResponse = z.object({ nodeId: z.uuid(), credential: z.string() });
export type CredentialResponse = z.infer<typeof CredentialResponse>;

export const InventoryImage = z
  .object({
    digest: z.string().regex(/^sha256:[0-9a-f]{64}$/, "expected sha256:<64 hex digits>"),
    bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    estargz: z.boolean().default(false),
  })
  .strict();

export const HeartbeatRequest = z
  .object({
    agentVersion: z.string().min(1).max(64),
    gpusFree: z.number().int().min(0).max(64),
    gpusUsed: z.number().int().min(0).max(64),
    figures: HostFigures.optional(),
    inventory: z
      .object({
        images: z.array(InventoryImage).max(10_000).default([]),
        snapshotIds: z.array(z.uuid()).max(10_000).default([]),
        warmReplicaIds: z.array(z.uuid()).max(1_000).default([]),
      })
      .strict()
      .default({ images: [], snapshotIds: [], warmReplicaIds: [] }),
  })
  .strict();
export type HeartbeatRequest = z.input<typeof HeartbeatRequest>;

export const HeartbeatResponse = z.object({
  nodeId: z.uuid(),
  state: z.string(),
  heartbeatIntervalSeconds: z.number().int().positive(),
  /** An operator rotated this node's credential: fetch a new one (POST /credential). */
  rotateCredential: z.boolean().default(false),
});
export type HeartbeatResponse = z.infer<typeof HeartbeatResponse>;

/** One phase event, as streamed by the agent (extended by the telemetry work). */
export const PhaseEventReport = z
  .object({
    coldStartId: z.uuid(),
    sequence: z.number().int().min(1).max(1_000_000),
    phase: Phase,
    startedAt: z.iso.datetime(),
    endedAt: z.iso.datetime().optional(),
    seconds: finite(86_400).optional(),
    bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    attributes: z
      .record(z.string().max(64), z.union([z.string().max(1024), z.number().finite(), z.boolean()]))
      .default({}),
  })
  .strict();
export type PhaseEventReport = z.infer<typeof PhaseEventReport>;

export const StartPathSchema = StartPath;

/** How often agents heartbeat; the control plane marks a node lost after several missed beats. */
export const HEARTBEAT_INTERVAL_MS = 5_000;

export const AGENT_API_PREFIX = "/api/agent/v1";
export const AGENT_PROTOCOL_VERSION = "1";

// Scheduler → agent: start, park and stop replicas, capture snapshots (the agent's runtimes
// implement these). Strings that end up in a command line are restricted so that they can
// never be read as an option (no leading '-') or split (no whitespace).

/**
 * An image (or checkpoint image) reference: the API's own grammar (core's IMAGE_REFERENCE),
 * so nothing the control plane accepted is refused here, and nothing that could be read as an
 * option or another host reaches a command line.
 */
const ImageReference = z
  .string()
  .min(1)
  .max(512)
  .regex(
    IMAGE_REFERENCE,
    "expected an image reference such as registry.example.com/team/model:tag",
  );
const Sha256Digest = z.string().regex(/^sha256:[0-9a-f]{64}$/, "expected sha256:<64 hex digits>");
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
  })
  .strict();
export type ReplicaSimulation = z.infer<typeof ReplicaSimulation>;

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
  });
export type StartReplicaRequest = z.infer<typeof StartReplicaRequest>;
export type StartReplicaRequestInput = z.input<typeof StartReplicaRequest>;

/** Keep a ready replica idle for a later warm handover, optionally putting its engine to sleep. */
export const ParkReplicaRequest = z
  .object({
    replicaId: z.uuid(),
    /** e.g. vLLM { path: "/sleep?level=1" } before the task is paused ... */
    engineSleep: EngineHttpCall.optional(),
    /** ... and { path: "/wake_up" } after it is resumed. */
    engineWake: EngineHttpCall.optional(),
  })
  .strict()
  .refine((r) => (r.engineSleep === undefined) === (r.engineWake === undefined), {
    message: "engineSleep and engineWake go together",
    path: ["engineWake"],
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

// Agent → control plane: telemetry. Phase events go in small batches, each idempotent on
// (coldStartId, sequence) so an agent can resend a batch after a timeout or a restart.

/** How a cold start ended, reported once by the agent (after its last phase event). */
export const ColdStartOutcomeReport = z
  .object({
    coldStartId: z.uuid(),
    status: z.enum(["succeeded", "failed"]),
    /** The phase that failed (status failed). */
    failedPhase: Phase.optional(),
    /** What went wrong, for the operator; never a secret. */
    error: z.string().max(4_096).optional(),
    endedAt: z.iso.datetime(),
  })
  .strict()
  .refine((o) => o.status === "succeeded" || o.failedPhase !== undefined, {
    message: "a failed outcome names the phase that failed",
    path: ["failedPhase"],
  });
export type ColdStartOutcomeReport = z.infer<typeof ColdStartOutcomeReport>;

export const TELEMETRY_MAX_EVENTS_PER_BATCH = 500;

export const TelemetryBatch = z
  .object({
    events: z.array(PhaseEventReport).max(TELEMETRY_MAX_EVENTS_PER_BATCH).default([]),
    outcomes: z.array(ColdStartOutcomeReport).max(TELEMETRY_MAX_EVENTS_PER_BATCH).default([]),
  })
  .strict();
export type TelemetryBatch = z.input<typeof TelemetryBatch>;

export const TelemetryResponse = z.object({
  /** Events stored now; resent ones already stored are not counted. */
  accepted: z.number().int().min(0),
  duplicates: z.number().int().min(0),
});
export type TelemetryResponse = z.infer<typeof TelemetryResponse>;
