import { HostFigures } from "@thaw/protocol";
import { describe, expect, it } from "vitest";
import { hostFiguresFor } from "./host-figures.ts";

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
