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

export const JoinRequest = z
  .object({
    joinToken: z.string().min(1).max(512),
    name: z.string().min(1).max(128),
    provider: z.enum(["aws", "sim"]),
    runtime: z.enum(["containerd", "sim"]),
    instanceId: z.string().min(1).max(128).optional(),
    zone: z.string().max(64).optional(),
    agentVersion: z.string().min(1).max(64),
    /** Where the scheduler reaches this agent's HTTP API. */
    agentUrl: z.url().max(512).optional(),
    figures: HostFigures,
  })
  .strict();
export type JoinRequest = z.infer<typeof JoinRequest>;

export const JoinResponse = z.object({
  nodeId: z.uuid(),
  /** Per-node credential: bearer token for every later call; shown once, stored hashed. */
  credential: z.string(),
  heartbeatIntervalSeconds: z.number().int().positive(),
});
export type JoinResponse = z.infer<typeof JoinResponse>;

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
    attributes: z.record(z.string().max(64), z.union([z.string().max(1024), z.number().finite(), z.boolean()])).default({}),
  })
  .strict();
export type PhaseEventReport = z.infer<typeof PhaseEventReport>;

export const StartPathSchema = StartPath;

/** How often agents heartbeat; the control plane marks a node lost after several missed beats. */
export const HEARTBEAT_INTERVAL_MS = 5_000;

export const AGENT_API_PREFIX = "/api/agent/v1";
export const AGENT_PROTOCOL_VERSION = "1";
