// Sleeping engines (the wake path): which engines can sleep and how, and where they fit.
export * from "./engine-sleep-calls.ts";
export * from "./choose-sleep-level.ts";
export * from "./finish-replica-sleep.ts";
