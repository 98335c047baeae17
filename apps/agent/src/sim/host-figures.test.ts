import { HostFigures } from "@thaw/protocol";
import { describe, expect, it } from "vitest";
import { hostFiguresFor, simHostFigures, simHostProfile } from "./host-figures.ts";

describe("hostFiguresFor", () => {
  it("reports every profile in a form the control plane accepts", () => {
    for (const type of ["g5.xlarge", "g6e.xlarge", "p4d.24xlarge", "p5.48xlarge", "m6in.2xlarge"]) {
      expect(HostFigures.safeParse(hostFiguresFor(type)).success).toBe(true);
    }
  });

  it("names GPUs the way endpoints ask for them", () => {
    expect(hostFiguresFor("g5.xlarge")).toMatchObject({
      gpuModel: "A10G",
      gpuCount: 1,
      diskWriteMiBps: 125,
    });
    expect(hostFiguresFor("p5.48xlarge")).toMatchObject({ gpuCount: 8 });
  });

  it("refuses an unknown instance type, listing the known ones", () => {
    expect(() => hostFiguresFor("g9.huge")).toThrow(
      /unknown sim instance type 'g9.huge'; known: g5.xlarge/,
    );
  });
});

describe("simHostFigures", () => {
  const bootedAt = new Date("2026-11-26T17:00:00Z");

  it("reports the simulated data volume as the disk it measured", () => {
    const figures = simHostFigures("g6e.xlarge", { throughputMiBps: 1000 }, bootedAt);
    expect(HostFigures.safeParse(figures).success).toBe(true);
    expect(figures).toMatchObject({
      diskWriteMiBps: 125,
      measuredDisk: { readMiBps: 1000, writeMiBps: 1000, measuredAt: bootedAt.toISOString() },
    });
    expect(simHostProfile("g6e.xlarge", { throughputMiBps: 1000 }).disk).toMatchObject({
      kind: "gp3",
      readMiBps: 1000,
      writeMiBps: 1000,
    });
  });

  it("without a volume, measures the default disk; instance-store types keep their NVMe", () => {
    expect(simHostFigures("g5.xlarge", undefined, bootedAt).measuredDisk).toMatchObject({
      readMiBps: 125,
      writeMiBps: 125,
    });
    expect(
      simHostFigures("p5.48xlarge", { throughputMiBps: 1000 }, bootedAt).measuredDisk,
    ).toMatchObject({ readMiBps: 24_000, writeMiBps: 12_000 });
  });
});
