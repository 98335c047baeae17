// The warm pool (ARCHITECTURE.md §5): what reconcile notes, and the worker's use case.
export * from "./warm-pool-memory.ts";
export * from "./best-non-warm-memo.ts";
export * from "./tend-warm-pool.ts";
export * from "./finish-replica-park.ts";
export * from "./timed-reads.ts";
