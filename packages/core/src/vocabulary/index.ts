import { z } from "zod";

// The shared vocabulary (DESIGN.md §1, §4). The database enums mirror these; a unit test
// fails if the two ever disagree. Add a value here and in packages/db/prisma/schema.prisma.

/** Start paths, fastest-when-possible first. */
export const StartPath = z.enum(["warm", "restore", "lazy", "pull"]);
export type StartPath = z.infer<typeof StartPath>;

/** The closed set of cold-start phases, in the order they happen. */
export const Phase = z.enum([
  "queue",
  "provision",
  "handover",
  "fetch_snapshot",
  "restore",
  "pull",
  "prefetch",
  "create",
  "start",
  "load_weights",
  "compile",
  "graph_capture",
  "warmup",
  "ready",
]);
export type Phase = z.infer<typeof Phase>;

export const ReplicaState = z.enum([
  "pending",
  "placed",
  "starting",
  "ready",
  "warm",
  "draining",
  "stopped",
  "failed",
]);
export type ReplicaState = z.infer<typeof ReplicaState>;

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

export const NodeProvider = z.enum(["aws", "sim"]);
export type NodeProvider = z.infer<typeof NodeProvider>;

export const NodeRuntime = z.enum(["containerd", "sim"]);
export type NodeRuntime = z.infer<typeof NodeRuntime>;

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

/** Replica states that hold GPUs on a node. */
export const GPU_HOLDING_REPLICA_STATES: readonly ReplicaState[] = [
  "placed",
  "starting",
  "ready",
  "warm",
  "draining",
];
export { plainText } from "./plain-text.ts";
