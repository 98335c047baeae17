// Pure decisions of the fleet worker (issue 6): what to launch, what to retire.
export * from "./plan-fleet-change.ts";
export * from "./plan-fleet-garbage.ts";
