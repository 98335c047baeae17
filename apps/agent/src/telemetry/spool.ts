import { type FileHandle, mkdir, open, readFile, rename, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  ColdStartOutcomeReport,
  KernelCacheCapturedReport,
  PhaseEventReport,
} from "@thaw/protocol";
import { z } from "zod";

// The telemetry spool: an append-only JSON-lines file under the state directory holding
// every phase event, outcome and captured kernel cache until the control plane acknowledges
// it. A record is on disk (written and fdatasync'd) before it is first sent, so an outage or
// an agent restart loses nothing; acknowledgements are appended as ack lines; compaction
// rewrites the file with only the records still unacknowledged (temp file, fsync, rename,
// fsync directory).
//
// Lines:  {"i":7,"h":"sim-g5-xlarge-1","e":{…PhaseEventReport}}
//         {"i":8,"h":"sim-g5-xlarge-1","o":{…ColdStartOutcomeReport}}
//         {"i":9,"h":"sim-g5-xlarge-1","k":{…KernelCacheCapturedReport}}
//         {"a":[[1,6],[8,8]]}          acknowledged ids, as inclusive ranges

export type SpoolRecord =
  | {
      id: number;
      host: string;
      event: PhaseEventReport;
      outcome?: undefined;
      kernelCache?: undefined;
    }
  | {
      id: number;
      host: string;
      outcome: ColdStartOutcomeReport;
      event?: undefined;
      kernelCache?: undefined;
    }
  | {
      id: number;
      host: string;
      kernelCache: KernelCacheCapturedReport;
      event?: undefined;
      outcome?: undefined;
    };

const RecordLine = z.union([
  z.object({ i: z.number().int().positive(), h: z.string().min(1), e: PhaseEventReport }),
  z.object({ i: z.number().int().positive(), h: z.string().min(1), o: ColdStartOutcomeReport }),
  z.object({ i: z.number().int().positive(), h: z.string().min(1), k: KernelCacheCapturedReport }),
  z.object({ a: z.array(z.tuple([z.number().int(), z.number().int()])) }),
]);

/** Compact once this many dead lines (acknowledged records and ack lines) have piled up. */
const COMPACT_AFTER_DEAD_LINES = 5_000;

export const SPOOL_FILE = "telemetry-spool.jsonl";

export interface SpoolLoad {
  /** Unacknowledged records, oldest first. */
  pending: SpoolRecord[];
  /** Lines that could not be read back (a torn last write, corruption), skipped. */
  skippedLines: number;
}

export class TelemetrySpool {
  private handle: FileHandle | undefined;
  /** Serialises every file operation: appends, acks and compaction never interleave. */
  private chain: Promise<unknown> = Promise.resolve();
  /** Encoded lines of the records not yet acknowledged, for compaction. */
  private live = new Map<number, string>();
  private deadLines = 0;
  private pendingAcks: number[] = [];
  private ackWrite: Promise<void> | undefined;
  private bytes = 0;
  private lastId = 0;

  private constructor(readonly file: string) {}

  /** Opens (creating) the spool in `dir` and reads back what was not acknowledged. */
  static async open(dir: string): Promise<{ spool: TelemetrySpool; load: SpoolLoad }> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const spool = new TelemetrySpool(join(dir, SPOOL_FILE));
    const load = await spool.replay();
    // Start from a clean file: no torn tail to append after, no dead lines.
    await spool.rewrite(load.pending);
    return { spool, load };
  }

  /** Ids continue after the highest one ever read back, so a resent record keeps its id. */
  nextId(): number {
    return ++this.lastId;
  }

  get sizeBytes(): number {
    return this.bytes;
  }

  get pendingCount(): number {
    return this.live.size;
  }

  /** Appends records durably: one write and one fdatasync for the lot (which also makes earlier acks durable). */
  append(records: readonly SpoolRecord[]): Promise<void> {
    if (records.length === 0) return Promise.resolve();
    return this.serial(async () => {
      const lines = records.map(encodeRecord);
      await this.write(lines.join(""), true);
      records.forEach((record, i) => this.live.set(record.id, lines[i]!));
    });
  }

  /**
   * Marks records acknowledged. Acks of the same moment go out as one line, without an
   * fsync of their own: a crashed process still leaves them in the page cache, the next
   * append's fdatasync makes them durable, and an ack lost with the machine only means a
   * resend the control plane recognises as a duplicate.
   */
  ack(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return Promise.resolve();
    this.pendingAcks.push(...ids);
    this.ackWrite ??= new Promise((resolve) => setImmediate(resolve)).then(() =>
      this.serial(async () => {
        const acked = this.pendingAcks;
        this.pendingAcks = [];
        this.ackWrite = undefined;
        await this.write(`${JSON.stringify({ a: toRanges(acked) })}\n`, false);
        for (const id of acked) if (this.live.delete(id)) this.deadLines++;
        this.deadLines++;
        if (this.deadLines >= COMPACT_AFTER_DEAD_LINES)
          await this.rewriteLines([...this.live.entries()]);
      }),
    );
    return this.ackWrite;
  }

  /** Empties the file once everything in it is acknowledged (cheap to call often). */
  async compactIfDrained(): Promise<void> {
    await this.ackWrite;
    return this.serial(async () => {
      if (this.live.size === 0 && this.deadLines > 0) await this.rewriteLines([]);
    });
  }

  /** Writes what is pending, empties a drained file, and closes it. */
  async close(): Promise<void> {
    await this.compactIfDrained();
    return this.serial(async () => {
      await this.handle?.close();
      this.handle = undefined;
    });
  }

  private serial<T>(operation: () => Promise<T>): Promise<T> {
    const next = this.chain.then(operation, operation);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async write(text: string, sync: boolean): Promise<void> {
    this.handle ??= await open(this.file, "a", 0o600);
    await this.handle.write(text);
    if (sync) await this.handle.datasync();
    this.bytes += Buffer.byteLength(text);
  }

  private async replay(): Promise<SpoolLoad> {
    let text: string;
    try {
      text = await readFile(this.file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT")
        return { pending: [], skippedLines: 0 };
      throw error;
    }
    const records = new Map<number, SpoolRecord>();
    let skippedLines = 0;
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      let parsed;
      try {
        parsed = RecordLine.safeParse(JSON.parse(line));
      } catch {
        skippedLines++;
        continue;
      }
      if (!parsed.success) {
        skippedLines++;
        continue;
      }
      const value = parsed.data;
      if ("a" in value) {
        for (const [from, to] of value.a) for (let id = from; id <= to; id++) records.delete(id);
        continue;
      }
      this.lastId = Math.max(this.lastId, value.i);
      records.set(
        value.i,
        "e" in value
          ? { id: value.i, host: value.h, event: value.e }
          : "o" in value
            ? { id: value.i, host: value.h, outcome: value.o }
            : { id: value.i, host: value.h, kernelCache: value.k },
      );
    }
    return { pending: [...records.values()].sort((a, b) => a.id - b.id), skippedLines };
  }

  private rewrite(pending: readonly SpoolRecord[]): Promise<void> {
    return this.rewriteLines(pending.map((record) => [record.id, encodeRecord(record)]));
  }

  private async rewriteLines(lines: [number, string][]): Promise<void> {
    await this.handle?.close();
    this.handle = undefined;
    const tmp = `${this.file}.tmp`;
    const out = await open(tmp, "w", 0o600);
    try {
      await out.write(lines.map(([, line]) => line).join(""));
      await out.sync();
    } finally {
      await out.close();
    }
    await rename(tmp, this.file);
    await syncDirectory(this.file);
    this.live = new Map(lines);
    this.deadLines = 0;
    this.bytes = (await stat(this.file)).size;
  }
}

function encodeRecord(record: SpoolRecord): string {
  return `${JSON.stringify(
    record.event
      ? { i: record.id, h: record.host, e: record.event }
      : record.outcome
        ? { i: record.id, h: record.host, o: record.outcome }
        : { i: record.id, h: record.host, k: record.kernelCache },
  )}\n`;
}

/** [3,1,2,7] → [[1,3],[7,7]] */
export function toRanges(ids: readonly number[]): [number, number][] {
  const sorted = [...ids].sort((a, b) => a - b);
  const ranges: [number, number][] = [];
  for (const id of sorted) {
    const last = ranges.at(-1);
    if (last && id <= last[1] + 1) last[1] = Math.max(last[1], id);
    else ranges.push([id, id]);
  }
  return ranges;
}

async function syncDirectory(file: string): Promise<void> {
  const dir = await open(join(file, ".."), "r");
  try {
    await dir.sync();
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is still atomic.
  } finally {
    await dir.close();
  }
}
