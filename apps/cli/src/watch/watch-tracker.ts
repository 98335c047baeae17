import type { Schemas } from "../api.ts";
import { coldStartLine, isClosed, whyLines, type ColdStartDetail } from "./cold-start-line.ts";

// The state of `thaw cold-starts watch`: which cold starts it shows, which it reads again on
// the next event or list, how many closed, and whether one failed. Live events carry only ids
// (of the whole org) and may be lost, so the command re-reads the endpoint's cold-start list
// as well; this decides what each read means. Pure: the command does the reading.

type Summary = Pick<Schemas["ColdStartSummary"], "id" | "status">;

export type Observation =
  | { kind: "new"; line: string; why: string[] }
  | { kind: "changed"; line: string }
  | { kind: "same" };

export type StopReason = { kind: "failed"; start: ColdStartDetail } | { kind: "count" } | null;

export class WatchTracker {
  /** Starts shown: their last line and status. */
  private readonly shown = new Map<string, { line: string; status: string }>();
  /** Ids never to read: other endpoints' starts, and this one's that closed before the watch. */
  private readonly skipped = new Set<string>();
  private listed = false;
  private firstFailure: ColdStartDetail | undefined;
  closedCount = 0;

  constructor(
    private readonly options: { count?: number | undefined; failOnError?: boolean | undefined },
  ) {}

  /** Of a live event's ids: those to read now, and whether any is unknown (the list says whose). */
  triage(ids: Iterable<string>): { read: string[]; unknown: string[] } {
    const read: string[] = [];
    const unknown: string[] = [];
    for (const id of new Set(ids)) {
      if (this.skipped.has(id)) continue;
      (this.shown.has(id) ? read : unknown).push(id);
    }
    return { read, unknown };
  }

  /**
   * The endpoint's recent starts, as listed: the ids to read. The first list sets the baseline
   * (starts already closed are history, not shown); afterwards a start not seen yet, or one
   * whose status moved since it was shown, is read.
   */
  fromList(starts: Summary[]): string[] {
    const first = !this.listed;
    this.listed = true;
    const read: string[] = [];
    for (const s of starts) {
      if (this.skipped.has(s.id)) continue;
      const known = this.shown.get(s.id);
      if (known) {
        if (known.status !== s.status) read.push(s.id);
      } else if (first && isClosed(s)) this.skipped.add(s.id);
      else read.push(s.id);
    }
    return read;
  }

  /** Ids a list of this endpoint did not contain: another endpoint's starts. */
  skip(ids: Iterable<string>): void {
    for (const id of ids) if (!this.shown.has(id)) this.skipped.add(id);
  }

  /** A start as just read: what to print. */
  observe(start: ColdStartDetail): Observation {
    const line = coldStartLine(start);
    const known = this.shown.get(start.id);
    this.shown.set(start.id, { line, status: start.status });
    if (isClosed(start) && (!known || !isClosed(known))) {
      this.closedCount++;
      if (start.status === "failed") this.firstFailure ??= start;
    }
    if (!known) return { kind: "new", line, why: whyLines(start) };
    return known.line === line ? { kind: "same" } : { kind: "changed", line };
  }

  /** Whether the watch is over: a start failed (with --fail-on-error), or --count closed. */
  stopReason(): StopReason {
    if (this.firstFailure && this.options.failOnError)
      return { kind: "failed", start: this.firstFailure };
    if (this.options.count !== undefined && this.closedCount >= this.options.count)
      return { kind: "count" };
    return null;
  }
}
