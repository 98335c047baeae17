// Snapshot use cases (ARCHITECTURE.md §3 step 7): the snapshot worker decides with
// ../scheduling/decide-snapshot-capture and records the capture through these.
export * from "./begin-snapshot-capture.ts";
export * from "./checkpoint-ref.ts";
export * from "./complete-snapshot-capture.ts";
export * from "./fail-snapshot-capture.ts";
export * from "./find-snapshot-work.ts";
