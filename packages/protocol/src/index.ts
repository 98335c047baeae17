// The agent protocol (ARCHITECTURE.md §7 "Schemas are declared once"): what the control plane,
// the scheduler and the node agent say to each other, as zod schemas and constants. It sits
// at the bottom of the workspace: zod only, no Node API and no other @thaw package, so core,
// the clients, the agent and a browser bundle can all import it.
export * from "./vocabulary.ts";
export * from "./plain-text.ts";
export * from "./replica-states.ts";
export * from "./image-reference.ts";
export * from "./cold-start-scenario.ts";
export * from "./host-figures.ts";
export * from "./protocol-version.ts";
export * from "./control-plane-api.ts";
export * from "./agent-api.ts";
export * from "./agent-errors.ts";
