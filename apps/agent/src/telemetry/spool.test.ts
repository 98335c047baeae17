import { randomUUID } from "node:crypto";
import { appendFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SPOOL_FILE, type SpoolRecord, TelemetrySpool, toRanges } from "./spool.ts";

const coldStartId = randomUUID();
const event = (id: number): SpoolRecord => ({
  id,
  host: "sim-g5-xlarge-1",
  event: {
    coldStartId,
    sequence: id,
    phase: "pull",
    startedAt: new Date().toISOString(),
    seconds: 1,
    attributes: {},
  },
});

describe("TelemetrySpool", () => {
  it("reads back what was not acknowledged after a restart, and keeps ids increasing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "thaw-spool-"));
    const { spool } = await TelemetrySpool.open(dir);
    const records = [1, 2, 3, 4].map(() => event(spool.nextId()));
    await spool.append(records);
    await spool.ack([1, 2]);
    // "crash": no close, no compaction; a new process opens the same directory.
    const { spool: reopened, load } = await TelemetrySpool.open(dir);
    expect(load.pending.map((r) => r.id)).toEqual([3, 4]);
    expect(load.pending[0]).toEqual(records[2]);
    expect(reopened.nextId()).toBe(5);
    await reopened.close();
    await spool.close();
  });

  it("reads back a captured kernel cache beside events and outcomes, each as it was written", async () => {
    const dir = mkdtempSync(join(tmpdir(), "thaw-spool-"));
    const { spool } = await TelemetrySpool.open(dir);
    const records: SpoolRecord[] = [
      event(spool.nextId()),
      {
        id: spool.nextId(),
        host: "sim-g5-xlarge-1",
        outcome: { coldStartId, status: "succeeded", endedAt: new Date().toISOString() },
      },
      {
        id: spool.nextId(),
        host: "sim-g5-xlarge-1",
        kernelCache: {
          coldStartId,
          kernelCacheId: randomUUID(),
          digest: `sha256:${"a".repeat(64)}`,
          bytes: 512_000_000,
        },
      },
    ];
    await spool.append(records);
    expect(readFileSync(join(dir, SPOOL_FILE), "utf8")).toContain('"k":{"coldStartId"');
    await spool.ack([1]);
    // A restart, then a compaction that rewrites what is left: still the same records.
    const { spool: reopened, load } = await TelemetrySpool.open(dir);
    expect(load).toEqual({ pending: records.slice(1), skippedLines: 0 });
    await reopened.close();
    const { spool: third, load: again } = await TelemetrySpool.open(dir);
    expect(again.pending).toEqual(records.slice(1));
    await third.close();
    await spool.close();
  });

  it("empties the file once everything is acknowledged", async () => {
    const dir = mkdtempSync(join(tmpdir(), "thaw-spool-"));
    const { spool } = await TelemetrySpool.open(dir);
    await spool.append([event(spool.nextId()), event(spool.nextId())]);
    expect(spool.sizeBytes).toBeGreaterThan(0);
    await spool.ack([1, 2]);
    expect(readFileSync(join(dir, SPOOL_FILE), "utf8")).toContain('{"a":[[1,2]]}');
    await spool.compactIfDrained();
    expect(spool.sizeBytes).toBe(0);
    expect(readFileSync(join(dir, SPOOL_FILE), "utf8")).toBe("");
    await spool.close();
  });

  it("skips a torn last line instead of failing, and does not append after it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "thaw-spool-"));
    const { spool } = await TelemetrySpool.open(dir);
    await spool.append([event(spool.nextId())]);
    await spool.close();
    appendFileSync(join(dir, SPOOL_FILE), '{"i":2,"h":"sim-g5-xl');
    const { spool: reopened, load } = await TelemetrySpool.open(dir);
    expect(load).toMatchObject({ skippedLines: 1, pending: [{ id: 1 }] });
    await reopened.append([event(reopened.nextId())]);
    await reopened.close();
    const { spool: third, load: again } = await TelemetrySpool.open(dir);
    expect(again.pending.map((r) => r.id)).toEqual([1, 2]);
    expect(again.skippedLines).toBe(0);
    await third.close();
  });

  it("encodes acknowledgements as ranges", () => {
    expect(toRanges([5, 1, 2, 3, 9, 8])).toEqual([
      [1, 3],
      [5, 5],
      [8, 9],
    ]);
  });
});
