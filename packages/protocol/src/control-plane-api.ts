import { z } from "zod";
import { boundedFigure } from "./bounded.ts";
import { HostFigures } from "./host-figures.ts";
import { plainText } from "./plain-text.ts";
import { Sha256Digest } from "./image-reference.ts";
import { AgentProtocolVersion } from "./protocol-version.ts";
import { NodeProvider, NodeRuntime, Phase } from "./vocabulary.ts";

// Agent → control plane: join, heartbeat, credential and telemetry, POSTed as JSON under
// /api/agent/v1 (apps/web serves them, one route file per path). Every call after the join
// carries the node's credential as a bearer token.

export const AGENT_API_PREFIX = "/api/agent/v1";

/** The control plane's agent API, by call. */
export const CONTROL_PLANE_PATHS = {
  join: `${AGENT_API_PREFIX}/join`,
  heartbeat: `${AGENT_API_PREFIX}/heartbeat`,
  credential: `${AGENT_API_PREFIX}/credential`,
  telemetry: `${AGENT_API_PREFIX}/telemetry`,
} as const;
export type ControlPlaneCall = keyof typeof CONTROL_PLANE_PATHS;

/** How often agents heartbeat; the control plane marks a node lost after several missed beats. */
export const HEARTBEAT_INTERVAL_SECONDS = 5;

/** SHA-256 of a certificate's DER, as 64 lower-case hex digits. */
export const CertSha256 = z
  .string()
  .regex(/^[0-9a-f]{64}$/, "expected the certificate's SHA-256 as 64 lower-case hex digits");

export const JoinRequest = z
  .object({
    joinToken: z.string().min(1).max(512),
    /**
     * The version of this protocol the agent speaks (protocol-version.ts). Absent: an agent
     * built before joins carried it, which spoke version 1.
     */
    protocolVersion: AgentProtocolVersion.optional(),
    // Shown on the fleet card and kept in the audit log: plain text like every name.
    name: plainText(128),
    provider: NodeProvider,
    runtime: NodeRuntime,
    instanceId: plainText(128).optional(),
    zone: plainText(64).optional(),
    agentVersion: plainText(64),
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
   * it is signed with the matching private key (node-agent-client's agent-call-signature.ts).
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
    digest: Sha256Digest,
    bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    estargz: z.boolean().default(false),
  })
  .strict();
export type InventoryImage = z.infer<typeof InventoryImage>;

export const HeartbeatRequest = z
  .object({
    agentVersion: plainText(64),
    gpusFree: z.number().int().min(0).max(64),
    gpusUsed: z.number().int().min(0).max(64),
    figures: HostFigures.optional(),
    inventory: z
      .object({
        images: z.array(InventoryImage).max(10_000).default([]),
        snapshotIds: z.array(z.uuid()).max(10_000).default([]),
        warmReplicaIds: z.array(z.uuid()).max(1_000).default([]),
        /** Replicas whose engines sleep here (no GPU held). Absent: an older agent. */
        sleepingReplicaIds: z.array(z.uuid()).max(1_000).optional(),
      })
      .strict()
      .default({ images: [], snapshotIds: [], warmReplicaIds: [] }),
  })
  .strict();
export type HeartbeatRequest = z.infer<typeof HeartbeatRequest>;
export type HeartbeatRequestInput = z.input<typeof HeartbeatRequest>;

export const HeartbeatResponse = z.object({
  nodeId: z.uuid(),
  /**
   * The node's state as the control plane has it (core's NodeState), read as text: an agent
   * older than a new state still takes the answer.
   */
  state: z.string(),
  heartbeatIntervalSeconds: z.number().int().positive(),
  /** An operator rotated this node's credential: fetch a new one (POST /credential). */
  rotateCredential: z.boolean().default(false),
});
export type HeartbeatResponse = z.infer<typeof HeartbeatResponse>;

// Telemetry. Phase events go in small batches, each idempotent on (coldStartId, sequence) so
// an agent can resend a batch after a timeout or a restart.

/** One phase event, as streamed by the agent. */
export const PhaseEventReport = z
  .object({
    coldStartId: z.uuid(),
    sequence: z.number().int().min(1).max(1_000_000),
    phase: Phase,
    startedAt: z.iso.datetime(),
    endedAt: z.iso.datetime().optional(),
    seconds: boundedFigure(86_400).optional(),
    bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    attributes: z
      .record(z.string().max(64), z.union([z.string().max(1024), z.number().finite(), z.boolean()]))
      .default({}),
  })
  .strict();
export type PhaseEventReport = z.infer<typeof PhaseEventReport>;

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

/**
 * A kernel cache the agent captured after a start that was told to (KernelCacheInstruction's
 * `capture`): packed from the engine's cache directory and pushed to the ref it was given.
 * Reported once, after the start's outcome; the control plane records it as the deployment's
 * cache for this node's GPU model and driver.
 */
export const KernelCacheCapturedReport = z
  .object({
    coldStartId: z.uuid(),
    kernelCacheId: z.uuid(),
    /** The pushed artifact's manifest digest: every later fetch is by it. */
    digest: Sha256Digest,
    /** The cache directory's size as packed. */
    bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  })
  .strict();
export type KernelCacheCapturedReport = z.infer<typeof KernelCacheCapturedReport>;

export const TELEMETRY_MAX_EVENTS_PER_BATCH = 500;

export const TelemetryBatch = z
  .object({
    events: z.array(PhaseEventReport).max(TELEMETRY_MAX_EVENTS_PER_BATCH).default([]),
    outcomes: z.array(ColdStartOutcomeReport).max(TELEMETRY_MAX_EVENTS_PER_BATCH).default([]),
    kernelCaches: z
      .array(KernelCacheCapturedReport)
      .max(TELEMETRY_MAX_EVENTS_PER_BATCH)
      .default([]),
  })
  .strict();
export type TelemetryBatch = z.infer<typeof TelemetryBatch>;
export type TelemetryBatchInput = z.input<typeof TelemetryBatch>;

export const TelemetryResponse = z.object({
  /** Events stored now; resent ones already stored are not counted. */
  accepted: z.number().int().min(0),
  duplicates: z.number().int().min(0),
});
export type TelemetryResponse = z.infer<typeof TelemetryResponse>;
