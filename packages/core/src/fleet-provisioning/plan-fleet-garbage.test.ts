import { describe, expect, it } from "vitest";
import { type GarbageNode, planFleetGarbage } from "./plan-fleet-garbage.ts";

const node = (over: Partial<GarbageNode> & { nodeId: string }): GarbageNode => ({
  instanceId: null,
  state: "ready",
  createdAtSeconds: 0,
  ...over,
});
const run = (instances: { instanceId: string; nodeId: string | null }[], nodes: GarbageNode[]) =>
  planFleetGarbage({ nowSeconds: 1_000, instances, nodes, launchGraceSeconds: 600 });

describe("planFleetGarbage", () => {
  it("leaves a consistent fleet alone", () => {
    expect(
      run([{ instanceId: "i-1", nodeId: "n1" }], [node({ nodeId: "n1", instanceId: "i-1" })]),
    ).toEqual({ terminate: [], markTerminated: [], adopt: [] });
  });

  it("terminates instances with no node row, a terminated row, or no node tag", () => {
    const plan = run(
      [
        { instanceId: "i-orphan", nodeId: "gone" },
        { instanceId: "i-dead", nodeId: "n1" },
        { instanceId: "i-untagged", nodeId: null },
      ],
      [node({ nodeId: "n1", instanceId: "i-dead", state: "terminated" })],
    );
    expect(plan.terminate.map((t) => t.instanceId)).toEqual(["i-orphan", "i-dead", "i-untagged"]);
    expect(plan.terminate[0]!.reason).toBe("no node row gone");
    expect(plan.markTerminated).toEqual([]);
  });

  it("marks rows whose instance is gone, and rows whose launch never reported one", () => {
    const plan = run(
      [],
      [
        node({ nodeId: "n1", instanceId: "i-1" }),
        node({ nodeId: "n2", state: "requested", createdAtSeconds: 100 }),
        node({ nodeId: "n3", state: "requested", createdAtSeconds: 900 }),
      ],
    );
    expect(plan.markTerminated).toEqual([
      { nodeId: "n1", reason: "instance i-1 no longer exists" },
      { nodeId: "n2", reason: "launch did not report an instance within 600 s" },
    ]);
  });

  it("terminates a host that was launched but never joined within the grace", () => {
    const plan = run(
      [
        { instanceId: "i-stuck", nodeId: "n1" },
        { instanceId: "i-young", nodeId: "n2" },
      ],
      [
        node({ nodeId: "n1", instanceId: "i-stuck", state: "requested", createdAtSeconds: 100 }),
        node({ nodeId: "n2", instanceId: "i-young", state: "requested", createdAtSeconds: 900 }),
      ],
    );
    const reason = "instance i-stuck did not join within 600 s";
    expect(plan.terminate).toEqual([{ instanceId: "i-stuck", reason }]);
    expect(plan.markTerminated).toEqual([{ nodeId: "n1", reason }]);
  });

  it("adopts the tagged instance of a launch that crashed before recording it, and only one", () => {
    const plan = run(
      [
        { instanceId: "i-a", nodeId: "n1" },
        { instanceId: "i-b", nodeId: "n1" },
      ],
      [node({ nodeId: "n1", state: "requested", createdAtSeconds: 0 })],
    );
    expect(plan.adopt).toEqual([{ nodeId: "n1", instanceId: "i-a" }]);
    expect(plan.terminate).toEqual([
      { instanceId: "i-b", reason: "node n1 already runs on another instance" },
    ]);
    expect(plan.markTerminated).toEqual([]);
  });

  it("terminates a duplicate instance of a node that has one recorded", () => {
    const plan = run(
      [
        { instanceId: "i-1", nodeId: "n1" },
        { instanceId: "i-2", nodeId: "n1" },
      ],
      [node({ nodeId: "n1", instanceId: "i-1" })],
    );
    expect(plan.terminate).toEqual([{ instanceId: "i-2", reason: "node n1 already runs on i-1" }]);
  });
});
