// The replay of request arrivals through the scheduler's decision functions in virtual time
// (bench:replay, and each endpoint's what-if): pure, so it runs wherever it is called.
export * from "./event-queue.ts";
export * from "./replay-input.ts";
export * from "./replay-engine.ts";
export * from "./replay-policies.ts";
export * from "./frontier.ts";
