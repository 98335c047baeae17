import { describe, expect, it } from "vitest";
import { effectiveDiskFigures, type NodeDiskColumns } from "./effective-disk-figures";

const g5Profile: NodeDiskColumns = {
  diskReadMiBps: 125,
  diskWriteMiBps: 125,
  volumeThroughputMiBps: null,
  measuredDiskReadMiBps: null,
  measuredDiskWriteMiBps: null,
};

describe("effectiveDiskFigures", () => {
  it("is the instance profile's figure when nothing better is known", () => {
    expect(effectiveDiskFigures(g5Profile)).toEqual({
      readMiBps: 125,
      writeMiBps: 125,
      source: "profile",
    });
  });

  it("is the provisioned volume's throughput, both ways, over the profile", () => {
    expect(effectiveDiskFigures({ ...g5Profile, volumeThroughputMiBps: 1000 })).toEqual({
      readMiBps: 1000,
      writeMiBps: 1000,
      source: "provisioned",
    });
  });

  it("is what the host measured over both", () => {
    expect(
      effectiveDiskFigures({
        ...g5Profile,
        volumeThroughputMiBps: 1000,
        measuredDiskReadMiBps: 940.5,
        measuredDiskWriteMiBps: 880,
      }),
    ).toEqual({ readMiBps: 940.5, writeMiBps: 880, source: "measured" });
  });

  it("ignores a measurement with a direction missing or not positive", () => {
    for (const [read, write] of [
      [900, null],
      [null, 900],
      [0, 900],
      [900, Number.NaN],
    ] as const) {
      expect(
        effectiveDiskFigures({
          ...g5Profile,
          volumeThroughputMiBps: 1000,
          measuredDiskReadMiBps: read,
          measuredDiskWriteMiBps: write,
        }).source,
      ).toBe("provisioned");
    }
    expect(effectiveDiskFigures({ ...g5Profile, volumeThroughputMiBps: 0 }).source).toBe("profile");
  });
});
