import * as dbEnums from "@thaw/db";
import { describe, expect, it } from "vitest";
import {
  ActorType,
  ColdStartStatus,
  ColdStartTrigger,
  DeploymentStatus,
  NodeProvider,
  NodeRuntime,
  NodeState,
  Objective,
  OrgRole,
  Phase,
  ReplicaDrainIntent,
  ReplicaPendingCause,
  ReplicaState,
  ScaleSource,
  SnapshotStatus,
  StartPath,
} from "./index.ts";

describe("vocabulary", () => {
  it.each([
    ["StartPath", StartPath, dbEnums.StartPath],
    ["Phase", Phase, dbEnums.Phase],
    ["ReplicaState", ReplicaState, dbEnums.ReplicaState],
    ["ReplicaPendingCause", ReplicaPendingCause, dbEnums.ReplicaPendingCause],
    ["ReplicaDrainIntent", ReplicaDrainIntent, dbEnums.ReplicaDrainIntent],
    ["NodeState", NodeState, dbEnums.NodeState],
    ["OrgRole", OrgRole, dbEnums.OrgRole],
    ["Objective", Objective, dbEnums.Objective],
    ["NodeProvider", NodeProvider, dbEnums.NodeProvider],
    ["NodeRuntime", NodeRuntime, dbEnums.NodeRuntime],
    ["ColdStartStatus", ColdStartStatus, dbEnums.ColdStartStatus],
    ["ColdStartTrigger", ColdStartTrigger, dbEnums.ColdStartTrigger],
    ["DeploymentStatus", DeploymentStatus, dbEnums.DeploymentStatus],
    ["SnapshotStatus", SnapshotStatus, dbEnums.SnapshotStatus],
    ["ScaleSource", ScaleSource, dbEnums.ScaleSource],
    ["ActorType", ActorType, dbEnums.ActorType],
  ] as const)(
    "%s matches the database enum value for value, in order",
    (_name, zodEnum, dbEnum) => {
      expect(zodEnum.options).toEqual(Object.values(dbEnum));
    },
  );

  it("lists the phases of ARCHITECTURE.md §4 in the order they happen", () => {
    expect(Phase.options[0]).toBe("queue");
    expect(Phase.options.at(-1)).toBe("ready");
    expect(Phase.options.indexOf("pull")).toBeLessThan(Phase.options.indexOf("create"));
    expect(Phase.options.indexOf("load_weights")).toBeLessThan(Phase.options.indexOf("warmup"));
  });

  it("rejects values outside the closed sets", () => {
    expect(StartPath.safeParse("teleport").success).toBe(false);
    expect(Phase.safeParse("PULL").success).toBe(false);
  });
});
