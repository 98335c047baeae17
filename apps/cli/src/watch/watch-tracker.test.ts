import { describe, expect, it } from "vitest";
import type { ColdStartDetail } from "./cold-start-line.ts";
import { fit, PlainScreen, TerminalScreen } from "./screen.ts";
import { WatchTracker } from "./watch-tracker.ts";

const detail = (
  id: string,
  status: ColdStartDetail["status"],
  seconds: number | null = 3,
): ColdStartDetail => ({
  id,
  attempt: 1,
  endpoint: { slug: "qwen-7b", name: "Qwen" },
  node: null,
  path: "pull",
  locality: "cold",
  predictedSeconds: 10,
  predictedMeanSeconds: null,
  predictedP10Seconds: null,
  predictedP90Seconds: null,
  actualSeconds: status === "succeeded" ? 9 : null,
  status,
  trigger: "scale_up",
  explored: false,
  explanation: "pull is the only path",
  error: status === "failed" ? "agent_unreachable" : null,
  failedPhase: status === "failed" ? ("pull" as const) : null,
  requestedAt: "2026-11-24T00:00:00.000Z",
  options: {},
  phases: [
    { sequence: 1, phase: "pull", startedAt: "", seconds, bytes: null, throughputBps: null },
  ],
});

const id = (n: number) => `0193aaaa-bbbb-7ccc-8ddd-${String(n).padStart(12, "0")}`;

describe("the watch's state", () => {
  it("takes the first list as the baseline: starts closed before the watch are not shown", () => {
    const tracker = new WatchTracker({});
    expect(
      tracker.fromList([
        { id: id(1), status: "succeeded" },
        { id: id(2), status: "running" },
      ]),
    ).toEqual([id(2)]);
    // Later lists: new starts, and shown ones whose status moved.
    tracker.observe(detail(id(2), "running"));
    expect(
      tracker.fromList([
        { id: id(3), status: "succeeded" },
        { id: id(2), status: "running" },
        { id: id(1), status: "succeeded" },
      ]),
    ).toEqual([id(3)]);
    expect(tracker.fromList([{ id: id(2), status: "succeeded" }])).toEqual([id(2)]);
  });

  it("reads known ids at once and asks the list about unknown ones; other endpoints' are skipped", () => {
    const tracker = new WatchTracker({});
    tracker.fromList([]);
    tracker.observe(detail(id(1), "running"));
    expect(tracker.triage([id(1), id(9), id(1)])).toEqual({ read: [id(1)], unknown: [id(9)] });
    tracker.skip([id(9)]);
    expect(tracker.triage([id(9)])).toEqual({ read: [], unknown: [] });
    expect(tracker.fromList([{ id: id(9), status: "running" }])).toEqual([]);
  });

  it("prints a start once with why, then only when its line changes", () => {
    const tracker = new WatchTracker({});
    const first = tracker.observe(detail(id(1), "running", null));
    expect(first.kind).toBe("new");
    expect(first.kind === "new" && first.why[0]).toMatch(/^ {2}why pull: /);
    expect(tracker.observe(detail(id(1), "running", null)).kind).toBe("same");
    expect(tracker.observe(detail(id(1), "running", 4)).kind).toBe("changed");
  });

  it("stops after --count closed starts, each counted once", () => {
    const tracker = new WatchTracker({ count: 2 });
    tracker.observe(detail(id(1), "succeeded"));
    tracker.observe(detail(id(1), "succeeded"));
    expect(tracker.closedCount).toBe(1);
    expect(tracker.stopReason()).toBeNull();
    tracker.observe(detail(id(2), "running"));
    tracker.observe(detail(id(2), "cancelled"));
    expect(tracker.stopReason()).toEqual({ kind: "count" });
  });

  it("stops on the first failed start only with --fail-on-error", () => {
    const gate = new WatchTracker({ failOnError: true });
    gate.observe(detail(id(1), "failed"));
    gate.observe(detail(id(2), "failed"));
    expect(gate.stopReason()).toMatchObject({ kind: "failed", start: { id: id(1) } });
    const plain = new WatchTracker({});
    plain.observe(detail(id(1), "failed"));
    expect(plain.stopReason()).toBeNull();
  });
});

describe("the watch's screens", () => {
  const observation = (line: string) => ({ kind: "changed" as const, line });

  it("appends every change as a line where there is no terminal", () => {
    const out: string[] = [];
    const screen = new PlainScreen((t) => out.push(t));
    screen.show("a", { kind: "new", line: "A1", why: ["  why"] });
    screen.show("a", { kind: "same" });
    screen.show("a", observation("A2"));
    expect(out.join("")).toBe("A1\n  why\nA2\n");
  });

  it("redraws a start's line in place on a terminal, and cuts lines to its width", () => {
    const out: string[] = [];
    const screen = new TerminalScreen(
      (t) => out.push(t),
      () => ({ columns: 10, rows: 24 }),
    );
    screen.show("a", { kind: "new", line: "A1", why: ["  why a, a long line"] });
    screen.show("b", { kind: "new", line: "B1", why: [] });
    screen.show("a", observation("A2"));
    expect(out).toEqual(["A1\n  why a,…\n", "B1\n", "\x1b[3A\r\x1b[2KA2\x1b[3B\r"]);
  });

  it("prints a change as a new line once its start has scrolled off the screen", () => {
    const out: string[] = [];
    const screen = new TerminalScreen(
      (t) => out.push(t),
      () => ({ columns: 80, rows: 2 }),
    );
    screen.show("a", { kind: "new", line: "A1", why: [] });
    screen.show("b", { kind: "new", line: "B1", why: ["  why b"] });
    screen.show("a", observation("A2"));
    expect(out.at(-1)).toBe("A2\n");
    // …and redraws it in place from its new row afterwards.
    screen.show("a", observation("A3"));
    expect(out.at(-1)).toBe("\x1b[1A\r\x1b[2KA3\x1b[1B\r");
  });

  it("fits a line to the width with an ellipsis, leaving short lines alone", () => {
    expect(fit("abcdef", 10)).toBe("abcdef");
    expect(fit("abcdefghijkl", 6)).toBe("abcd…");
    expect(fit("██████", 4)).toBe("██…");
  });
});
