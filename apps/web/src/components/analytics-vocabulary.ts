import type { BoundKind, Phase, StartPath } from "@thaw/core";

// The closed sets the charts iterate over, in DESIGN.md order. Type-only imports keep the
// server code of @thaw/core out of the browser bundle; `satisfies` keeps them in step.

export const START_PATHS = [
  "warm",
  "restore",
  "lazy",
  "pull",
] as const satisfies readonly StartPath[];

export const PHASES = [
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
] as const satisfies readonly Phase[];

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
  compile: "#d97706",
  graph_capture: "#f59e0b",
  warmup: "#b45309",
};

export const PATH_COLORS: Record<StartPath, string> = {
  warm: "#16a34a",
  restore: "#7c3aed",
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
