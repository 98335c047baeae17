// The kernel-cache store (issue 20): a deployment's compiled-kernel caches per GPU model and
// driver, claimed at dispatch by a start that compiles, recorded from its agent's telemetry
// (telemetry/ingest-telemetry.ts), fetched by later starts that placement sends there.
export * from "./claim-kernel-cache-capture.ts";
export * from "./kernel-cache-ref.ts";
