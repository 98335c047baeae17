import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { probeDisk } from "./disk-probe.ts";

// The real probe: dd with direct I/O on this machine's disk, small.

describe("probeDisk", () => {
  const dir = mkdtempSync(join(tmpdir(), "thaw-disk-probe-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("measures write and read throughput with dd and leaves nothing behind", async () => {
    const measured = await probeDisk({ dir, bytes: 16 * 1024 * 1024, blockBytes: 1024 * 1024 });
    expect(measured.writeMiBps).toBeGreaterThan(1);
    expect(measured.readMiBps).toBeGreaterThan(1);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("counts what dd moved when the time is up", async () => {
    const started = Date.now();
    const measured = await probeDisk({
      dir,
      bytes: 16 * 1024 * 1024 * 1024,
      blockBytes: 1024 * 1024,
      streams: 1,
      timeoutMs: 300,
    }).catch((error: Error) => error);
    // A disk with less than 17 GiB free refuses before writing: the bound is then untested.
    if (measured instanceof Error) {
      expect(measured.message).toMatch(/free/);
      return;
    }
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(measured.writeMiBps).toBeGreaterThan(0);
  });

  it("names dd's complaint when the directory cannot take direct I/O or dd is missing", async () => {
    await expect(probeDisk({ dir, bytes: 1024 * 1024, ddPath: "/nonexistent/dd" })).rejects.toThrow(
      /cannot run \/nonexistent\/dd/,
    );
  });
});
