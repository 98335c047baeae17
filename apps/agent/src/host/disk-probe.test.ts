import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { aggregateMiBps, measureDisk, parseDdStats, readCachedProbe } from "./disk-probe.ts";

describe("parseDdStats", () => {
  it("reads GNU dd's closing line, also after an interrupt", () => {
    expect(
      parseDdStats(
        "64+0 records in\n64+0 records out\n268435456 bytes (268 MB, 256 MiB) copied, 0.304655 s, 881 MB/s\n",
      ),
    ).toEqual({ bytes: 268435456, seconds: 0.304655 });
    expect(parseDdStats("dd: error writing 'x': Invalid argument\n")).toBeNull();
  });

  it("reads busybox dd's, and a bytes-only line in scientific notation", () => {
    expect(parseDdStats("16777216 bytes (16.0MB) copied, 0.021 seconds, 761.9MB/s\n")).toEqual({
      bytes: 16777216,
      seconds: 0.021,
    });
    expect(parseDdStats("16777216 bytes (16.0MB) copied, 0.021 s, 761.9MB/s\n")).toEqual({
      bytes: 16777216,
      seconds: 0.021,
    });
    expect(parseDdStats("1048576 bytes (1.0 MB, 1.0 MiB) copied, 9.5e-05 s, 11 GB/s")).toEqual({
      bytes: 1048576,
      seconds: 0.000095,
    });
  });
});

describe("aggregateMiBps", () => {
  it("is what the streams moved together over the longest of them", () => {
    const mib = 1024 * 1024;
    expect(
      aggregateMiBps([
        { bytes: 64 * mib, seconds: 0.5 },
        { bytes: 64 * mib, seconds: 0.25 },
      ]),
    ).toBe(256);
    expect(aggregateMiBps([{ bytes: 0, seconds: 1 }])).toBeNull();
    expect(aggregateMiBps([])).toBeNull();
  });
});

describe("measureDisk", () => {
  let stateDir: string;
  beforeEach(() => {
    stateDir = mkdtempSync(join(tmpdir(), "thaw-disk-probe-"));
  });
  afterEach(() => rmSync(stateDir, { recursive: true, force: true }));

  const now = () => new Date("2026-11-26T17:00:00Z");

  it("probes once, then reuses the measurement on later boots", async () => {
    const probe = vi.fn().mockResolvedValue({ readMiBps: 980.4, writeMiBps: 1001.2 });
    const first = await measureDisk({ stateDir, dir: "/data", probe, now });
    expect(first).toEqual({
      cached: false,
      measured: { readMiBps: 980.4, writeMiBps: 1001.2, measuredAt: "2026-11-26T17:00:00.000Z" },
    });
    const again = await measureDisk({ stateDir, dir: "/data", probe, now });
    expect(again).toEqual({ cached: true, measured: first.measured });
    expect(probe).toHaveBeenCalledTimes(1);
    expect(JSON.parse(readFileSync(join(stateDir, "disk-probe.json"), "utf8"))).toMatchObject({
      dir: "/data",
    });
  });

  it("probes again for another directory, or a cache it cannot read", async () => {
    const probe = vi.fn().mockResolvedValue({ readMiBps: 125, writeMiBps: 125 });
    await measureDisk({ stateDir, dir: "/data", probe, now });
    expect(readCachedProbe(stateDir, "/elsewhere")).toBeUndefined();
    await measureDisk({ stateDir, dir: "/elsewhere", probe, now });
    writeFileSync(join(stateDir, "disk-probe.json"), "{ not json");
    await measureDisk({ stateDir, dir: "/elsewhere", probe, now });
    writeFileSync(join(stateDir, "disk-probe.json"), JSON.stringify({ dir: "/elsewhere" }));
    await measureDisk({ stateDir, dir: "/elsewhere", probe, now });
    expect(probe).toHaveBeenCalledTimes(4);
  });

  it("caches nothing when the probe fails, so the next boot tries again", async () => {
    const probe = vi.fn().mockRejectedValue(new Error("disk probe: dd failed"));
    await expect(measureDisk({ stateDir, dir: "/data", probe, now })).rejects.toThrow(/dd failed/);
    expect(readCachedProbe(stateDir, "/data")).toBeUndefined();
  });
});
