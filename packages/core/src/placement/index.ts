// Placement use cases (ARCHITECTURE.md §3): the scheduler's workers load, decide with the pure
// functions of ../scheduling, and persist through these.
export * from "./scheduling-inputs.ts";
export * from "./load-placement-state.ts";
export * from "./options-record.ts";
export * from "./place-replica.ts";
export * from "./outdated-replicas-to-keep.ts";
export * from "./replica-reason.ts";
export * from "./place-job-heads.ts";
export * from "./decide-reconcile.ts";
export * from "./reconcile-endpoint.ts";
export * from "./finish-replica-stop.ts";
export * from "./prepare-dispatch.ts";
export * from "./record-dispatch.ts";
export * from "./handle-closed-cold-start.ts";
export * from "./find-lost-work.ts";
export * from "./sweep-walk.ts";
export * from "./predict-endpoint-paths.ts";
