import { type ReplicaState } from "@thaw/protocol";
import { z } from "zod";

// The shared vocabulary (ARCHITECTURE.md §1, §4). The database enums mirror these; a unit test
// fails if the two ever disagree. Add a value here and in packages/db/prisma/schema.prisma.
// The words the agent protocol carries are declared there (@thaw/protocol) and re-exported.
export {
  NodeProvider,
  NodeRuntime,
  Phase,
  plainText,
  ReplicaState,
  StartPath,
} from "@thaw/protocol";

/** Why a replica is not serving: waiting (pending) or given up (failed). Scheduling reads it. */
export const ReplicaPendingCause = z.enum([
  "waiting_for_capacity",
  "host_launch_blocked",
  "start_not_accepted",
  "start_failed",
  "start_refused",
  "start_attempts_exhausted",
]);
export type ReplicaPendingCause = z.infer<typeof ReplicaPendingCause>;

/**
 * Why a replica was taken out of service; park_candidate is the warm pool's to park,
 * sleep_candidate its to put to sleep.
 */
export const ReplicaDrainIntent = z.enum([
  "scale_down",
  "park_candidate",
  "keep_alive_over",
  "sleep_candidate",
  "park_refused",
  "node_drained",
  "node_lost",
  "snapshot_captured",
  "vanished_from_node",
]);
export type ReplicaDrainIntent = z.infer<typeof ReplicaDrainIntent>;

export const NodeState = z.enum([
  "requested",
  "booting",
  "ready",
  "draining",
  "lost",
  "terminated",
]);
export type NodeState = z.infer<typeof NodeState>;

export const OrgRole = z.enum(["owner", "admin", "member", "viewer"]);
export type OrgRole = z.infer<typeof OrgRole>;

export const Objective = z.enum(["mean", "p90"]);
export type Objective = z.infer<typeof Objective>;

export const ColdStartStatus = z.enum([
  "scheduled",
  "dispatched",
  "running",
  "succeeded",
  "failed",
  "cancelled",
]);
export type ColdStartStatus = z.infer<typeof ColdStartStatus>;

export const ColdStartTrigger = z.enum(["scale_up", "scale_from_zero", "replacement", "prewarm"]);
export type ColdStartTrigger = z.infer<typeof ColdStartTrigger>;

export const DeploymentStatus = z.enum(["pending", "active", "superseded", "failed"]);
export type DeploymentStatus = z.infer<typeof DeploymentStatus>;

export const SnapshotStatus = z.enum(["capturing", "ready", "quarantined", "deleted"]);
export type SnapshotStatus = z.infer<typeof SnapshotStatus>;

/** Who changed an endpoint's desired count. */
export const ScaleSource = z.enum([
  "dashboard",
  "api",
  "signal",
  "scale_from_zero",
  "idle",
  "system",
]);
export type ScaleSource = z.infer<typeof ScaleSource>;

/** Who did something the audit log (or a scale event) records. */
export const ActorType = z.enum(["user", "api_key", "node", "system"]);
export type ActorType = z.infer<typeof ActorType>;

/** Replica states that hold GPUs on a node. */
export const GPU_HOLDING_REPLICA_STATES: readonly ReplicaState[] = [
  "placed",
  "starting",
  "ready",
  "warm",
  "draining",
];
