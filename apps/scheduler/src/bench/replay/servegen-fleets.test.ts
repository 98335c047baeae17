import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { gpuPlacement, MODELS } from "./model-catalogue.ts";
import { parseFleet } from "./replay-input.ts";

// The two fleets the ServeGen workload is replayed on (bench/fleets/README.md): the same
// hosts on gp3's default 125 MiB/s and on 1,000 MiB/s provisioned.
const fleetPath = (name: string) =>
  fileURLToPath(new URL(`../../../bench/fleets/${name}.json`, import.meta.url));

describe.each([
  ["servegen-gp3-default", 125],
  ["servegen-gp3-1000", 1000],
])("%s", (name, mibps) => {
  const fleet = parseFleet(fleetPath(name));

  it(`runs every disk at ${mibps} MiB/s`, () => {
    for (const host of fleet.hosts) {
      expect(host.host.diskWriteMiBps).toBe(mibps);
      expect(host.host.diskReadMiBps).toBe(mibps);
    }
  });

  it("has 124 A10G and 292 L40S GPUs, the 4-GPU hosts carrying every multi-GPU placement", () => {
    const gpus = (model: string) =>
      fleet.hosts.filter((h) => h.gpuModel === model).reduce((sum, h) => sum + h.gpus, 0);
    expect(gpus("A10G")).toBe(124);
    expect(gpus("L40S")).toBe(292);
    for (const model of MODELS) {
      const placement = gpuPlacement(model);
      expect(
        fleet.hosts.some((h) => h.gpuModel === placement.gpuType && h.gpus >= placement.gpus),
        `${model.id} has a host`,
      ).toBe(true);
    }
  });

  it("names every host once", () => {
    expect(new Set(fleet.hosts.map((h) => h.name)).size).toBe(fleet.hosts.length);
  });
});

// The Azure and multi-endpoint fleets on provisioned disks: their default-disk siblings with
// every disk at 1,000 MiB/s and nothing else changed.
describe.each([
  ["g5-8", "g5-8-gp3-1000"],
  ["mixed", "mixed-gp3-1000"],
])("%s on 1,000 MiB/s disks", (base, provisioned) => {
  it("has the same hosts and endpoints, every disk at 1,000 MiB/s", () => {
    const a = parseFleet(fleetPath(base));
    const b = parseFleet(fleetPath(provisioned));
    expect(b.hosts.map((h) => h.name)).toEqual(a.hosts.map((h) => h.name));
    b.hosts.forEach((host, i) => {
      expect(host.host.diskReadMiBps).toBe(1000);
      expect(host.host.diskWriteMiBps).toBe(1000);
      expect({ ...host.host, diskReadMiBps: 0, diskWriteMiBps: 0 }).toEqual({
        ...a.hosts[i]!.host,
        diskReadMiBps: 0,
        diskWriteMiBps: 0,
      });
    });
    for (const name of ["sparse-1b", "batch-20b", "rare-20b", "any-other"])
      expect(b.endpoint(name)).toEqual(a.endpoint(name));
  });
});
