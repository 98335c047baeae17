import type { BoundKind } from "@thaw/core";
// The vocabulary entry alone (zod only): the server code of @thaw/core stays out of the
// browser bundle, and the closed sets stay declared once (ARCHITECTURE.md §4).
import { Phase, StartPath } from "@thaw/core/vocabulary";

export const START_PATHS = StartPath.options;

/** The phases a chart stacks: every phase but `ready`, a zero-length marker. */
export const PHASES = Phase.options.filter((p): p is Exclude<Phase, "ready"> => p !== "ready");

/** One colour per phase (the waterfall's families: transfer teal, weights violet, engine amber). */
export const PHASE_COLORS: Record<(typeof PHASES)[number], string> = {
  queue: "#98a2b3",
  provision: "#667085",
  handover: "#16a34a",
  fetch_snapshot: "#0e7490",
  restore: "#7c3aed",
  pull: "#0891b2",
  prefetch: "#22d3ee",
  create: "#64748b",
  start: "#2563eb",
  load_weights: "#a855f7",
  peer_transfer: "#c026d3",
  fetch_kernel_cache: "#0d9488",
  compile: "#d97706",
  graph_capture: "#f59e0b",
  warmup: "#b45309",
};

export const PATH_COLORS: Record<StartPath, string> = {
  warm: "#16a34a",
  wake: "#65a30d",
  restore: "#7c3aed",
  peer: "#c026d3",
  lazy: "#0891b2",
  pull: "#d97706",
};

export const BOUND_LABELS: Record<BoundKind, string> = {
  network: "network",
  registry_stream: "registry stream",
  decompression: "decompression",
  disk_write: "disk write",
  disk_read: "disk read",
  sequential_loader: "loader",
  pcie: "PCIe",
  latency: "latency",
  compile: "compile",
};

/** What a GPU was doing, as the cost card stacks it (core costs/get-gpu-cost.ts). */
export const GPU_TIME_CATEGORIES = [
  "serving",
  "starting",
  "warm_idle",
  "failed",
  "stopping",
] as const;
export type GpuTimeCategoryName = (typeof GPU_TIME_CATEGORIES)[number];

export const GPU_TIME_LABELS: Record<GpuTimeCategoryName, string> = {
  serving: "serving",
  starting: "starting",
  warm_idle: "warm idle",
  failed: "failed starts",
  stopping: "stopping",
};

export const GPU_TIME_COLORS: Record<GpuTimeCategoryName, string> = {
  serving: "#16a34a",
  starting: "#d97706",
  warm_idle: "#0891b2",
  failed: "#dc2626",
  stopping: "#94a3b8",
};
