import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  offeringKey,
  planFleetChange,
  type FleetChangeInput,
  type FleetHost,
  type Offering,
} from "./plan-fleet-change.ts";

const L40S_A: Offering = {
  instanceType: "g6e.xlarge",
  zone: "us-east-1a",
  gpuModel: "L40S",
  gpusPerHost: 1,
  priceUsdPerHour: 1.86,
};
const L40S_B: Offering = { ...L40S_A, zone: "us-east-1b" };
const L40S_4: Offering = {
  ...L40S_A,
  instanceType: "g6e.12xlarge",
  gpusPerHost: 4,
  priceUsdPerHour: 10.49,
};

const base: FleetChangeInput = {
  nowSeconds: 10_000,
  offerings: [L40S_A, L40S_B, L40S_4],
  unavailableUntil: {},
  hosts: [],
  pending: [],
  spendCapUsdPerHour: null,
  idleCooldownSeconds: 600,
  maxLaunches: 10,
};
const host = (over: Partial<FleetHost>): FleetHost => ({
  nodeId: "n1",
  gpuModel: "L40S",
  gpus: 1,
  state: "ready",
  priceUsdPerHour: 1.86,
  replicas: 0,
  idleSinceSeconds: null,
  ...over,
});

describe("planFleetChange", () => {
  it("launches from the first available offering until the pending GPUs fit", () => {
    const change = planFleetChange({ ...base, pending: [{ gpuModel: "L40S", gpus: 2 }] });
    expect(change.launch.map((l) => offeringKey(l.offering))).toEqual([
      "g6e.xlarge@us-east-1a",
      "g6e.xlarge@us-east-1a",
    ]);
  });

  it("falls back past an offering out of capacity until its TTL runs out", () => {
    const unavailableUntil = { [offeringKey(L40S_A)]: 10_300 };
    const during = planFleetChange({
      ...base,
      unavailableUntil,
      pending: [{ gpuModel: "L40S", gpus: 1 }],
    });
    expect(offeringKey(during.launch[0]!.offering)).toBe("g6e.xlarge@us-east-1b");
    const after = planFleetChange({
      ...base,
      nowSeconds: 10_300,
      unavailableUntil,
      pending: [{ gpuModel: "L40S", gpus: 1 }],
    });
    expect(offeringKey(after.launch[0]!.offering)).toBe("g6e.xlarge@us-east-1a");
  });

  it("counts hosts already on their way, so a retry does not double the order", () => {
    const change = planFleetChange({
      ...base,
      hosts: [host({ state: "booting", nodeId: "b" })],
      pending: [{ gpuModel: "L40S", gpus: 1 }],
    });
    expect(change.launch).toEqual([]);
  });

  it("stops at the spend cap with a visible reason", () => {
    const change = planFleetChange({
      ...base,
      spendCapUsdPerHour: 4,
      hosts: [host({ replicas: 1 })],
      pending: [{ gpuModel: "L40S", gpus: 3 }],
    });
    expect(change.launch).toHaveLength(1);
    expect(change.blocked[0]!.reason).toMatch(/spend cap \$4\/h/);
    expect(change.blocked[0]!.cause).toBe("spend_cap");
  });

  it("says so when no offering carries the GPU", () => {
    const change = planFleetChange({ ...base, pending: [{ gpuModel: "H100", gpus: 8 }] });
    expect(change.blocked).toEqual([
      {
        gpuModel: "H100",
        gpus: 8,
        cause: "no_offering",
        reason: "no offering provides H100 GPUs",
      },
    ]);
  });

  it("retires only idle ready hosts past the cool-down whose GPU nobody waits for", () => {
    const change = planFleetChange({
      ...base,
      hosts: [
        host({ nodeId: "idle-long", idleSinceSeconds: 9_000 }),
        host({ nodeId: "idle-short", idleSinceSeconds: 9_900 }),
        host({ nodeId: "busy", replicas: 1 }),
        host({ nodeId: "booting", state: "booting", idleSinceSeconds: 0 }),
      ],
    });
    expect(change.retire.map((r) => r.nodeId)).toEqual(["idle-long"]);
    const wanted = planFleetChange({
      ...base,
      hosts: [host({ nodeId: "idle-long", idleSinceSeconds: 9_000 })],
      pending: [{ gpuModel: "L40S", gpus: 1 }],
    });
    expect(wanted.retire).toEqual([]);
  });

  it("never retires a host holding replicas, never exceeds the cap, never uses an unavailable offering", () => {
    const offerings = [L40S_A, L40S_B, L40S_4];
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            replicas: fc.integer({ min: 0, max: 3 }),
            idle: fc.option(fc.integer({ min: 0, max: 10_000 }), { nil: null }),
            state: fc.constantFrom("requested", "booting", "ready", "draining", "lost"),
          }),
          { maxLength: 8 },
        ),
        fc.integer({ min: 0, max: 20 }),
        fc.option(fc.double({ min: 0, max: 60, noNaN: true }), { nil: null }),
        fc.subarray(offerings.map(offeringKey)),
        (hostSpecs, pendingGpus, cap, unavailable) => {
          const hosts = hostSpecs.map((h, i) =>
            host({
              nodeId: `n${i}`,
              replicas: h.replicas,
              idleSinceSeconds: h.replicas > 0 ? null : h.idle,
              state: h.state,
            }),
          );
          const unavailableUntil = Object.fromEntries(unavailable.map((k) => [k, 20_000]));
          const change = planFleetChange({
            ...base,
            hosts,
            unavailableUntil,
            spendCapUsdPerHour: cap,
            pending: [{ gpuModel: "L40S", gpus: pendingGpus }],
          });
          for (const r of change.retire)
            expect(hosts.find((h) => h.nodeId === r.nodeId)!.replicas).toBe(0);
          for (const l of change.launch) expect(unavailable).not.toContain(offeringKey(l.offering));
          expect(change.launch.length).toBeLessThanOrEqual(base.maxLaunches);
          if (cap !== null) {
            const running = hosts
              .filter((h) => h.state !== "lost" && h.state !== "terminated")
              .reduce((s, h) => s + h.priceUsdPerHour, 0);
            const added = change.launch.reduce((s, l) => s + l.offering.priceUsdPerHour, 0);
            if (added > 0) expect(running + added).toBeLessThanOrEqual(cap + 1e-9);
          }
        },
      ),
    );
  });
});
