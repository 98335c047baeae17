// Pure decisions of the fleet worker (issue 6): what to launch, what to retire.
export * from "./plan-fleet-change.ts";
export * from "./plan-fleet-garbage.ts";
export * from "./fleet-policy.ts";
export * from "./begin-host-launch.ts";
export * from "./retire-host.ts";
export * from "./load-fleet-snapshot.ts";
export * from "./mark-host-launch-blocked.ts";
export * from "./record-provision-phases.ts";
