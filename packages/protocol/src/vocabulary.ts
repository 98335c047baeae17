import { z } from "zod";

// The words both sides of the agent protocol use (ARCHITECTURE.md §1, §4). packages/core
// re-exports them as its vocabulary; the database enums mirror them (core's vocabulary test
// fails if the two ever disagree). Add a value here and in packages/db/prisma/schema.prisma.

/**
 * Start paths, fastest-when-possible first: hand over a parked replica that holds its GPUs
 * (warm), wake a sleeping engine that holds only host memory (wake), restore a CRIU snapshot,
 * copy the weights (and compiled-kernel caches) from a serving replica on another host (peer),
 * start from an eStargz image read lazily, or pull the image.
 */
export const StartPath = z.enum(["warm", "wake", "restore", "peer", "lazy", "pull"]);
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
  "peer_transfer",
  "fetch_kernel_cache",
  "compile",
  "graph_capture",
  "warmup",
  "ready",
]);
export type Phase = z.infer<typeof Phase>;

/** Where a node runs: a cloud's instance, or a simulated host. */
export const NodeProvider = z.enum(["aws", "sim"]);
export type NodeProvider = z.infer<typeof NodeProvider>;

/** How a node's agent runs replicas. */
export const NodeRuntime = z.enum(["containerd", "sim"]);
export type NodeRuntime = z.infer<typeof NodeRuntime>;
