import { describe, expect, it } from "vitest";
import type { ColdStartStatus, ReplicaState } from "../vocabulary/index.ts";
import {
  actualSecondsOf,
  measurePhase,
  nextColdStart,
  nextReplicaState,
  type StoredPhases,
} from "./cold-start-transitions.ts";

const t0 = new Date("2026-01-01T00:00:00.000Z");
const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
const none: StoredPhases = { count: 0, maxSequence: null, secondsSum: 0, readyAt: null };
const some = (over: Partial<StoredPhases> = {}): StoredPhases => ({
  count: 3,
  maxSequence: 3,
  secondsSum: 42,
  readyAt: null,
  ...over,
});

describe("measurePhase", () => {
  it("computes seconds from startedAt/endedAt and throughput from bytes", () => {
    expect(measurePhase({ startedAt: t0, endedAt: at(4), bytes: 1000 })).toEqual({
      ok: true,
      seconds: 4,
      throughputBps: 250,
    });
  });

  it("keeps reported seconds over the timestamps", () => {
    expect(measurePhase({ startedAt: t0, endedAt: at(4), seconds: 2, bytes: 1000 })).toEqual({
      ok: true,
      seconds: 2,
      throughputBps: 500,
    });
  });

  it("has no throughput without bytes or for a zero-length phase, and no seconds without an end", () => {
    expect(measurePhase({ startedAt: t0, endedAt: at(4) })).toMatchObject({ throughputBps: null });
    expect(measurePhase({ startedAt: t0, endedAt: t0, bytes: 10 })).toEqual({
      ok: true,
      seconds: 0,
      throughputBps: null,
    });
    expect(measurePhase({ startedAt: t0, bytes: 10 })).toEqual({
      ok: true,
      seconds: null,
      throughputBps: null,
    });
  });

  it("refuses an end before the start and an absurdly long phase, naming endedAt", () => {
    expect(measurePhase({ startedAt: at(5), endedAt: t0 })).toMatchObject({
      ok: false,
      field: "endedAt",
    });
    expect(measurePhase({ startedAt: t0, endedAt: at(86_401) })).toMatchObject({
      ok: false,
      field: "endedAt",
    });
    expect(measurePhase({ startedAt: t0, endedAt: new Date(Number.NaN) })).toMatchObject({
      ok: false,
    });
  });
});

describe("nextColdStart", () => {
  it("moves scheduled and dispatched to running on the first stored event", () => {
    for (const status of ["scheduled", "dispatched"] as const)
      expect(nextColdStart({ status, lastSequence: 0 }, some(), undefined)).toEqual({
        status: "running",
        lastSequence: 3,
      });
  });

  it("changes nothing when nothing new is stored (a resent batch)", () => {
    expect(nextColdStart({ status: "running", lastSequence: 3 }, some(), undefined)).toBeNull();
    expect(nextColdStart({ status: "dispatched", lastSequence: 0 }, none, undefined)).toBeNull();
  });

  it("succeeds on a stored ready marker, with actualSeconds the sum of the phases", () => {
    expect(
      nextColdStart(
        { status: "running", lastSequence: 2 },
        some({ readyAt: at(42), secondsSum: 41.5 }),
        undefined,
      ),
    ).toEqual({
      lastSequence: 3,
      status: "succeeded",
      readyAt: at(42),
      finishedAt: at(42),
      actualSeconds: 41.5,
    });
  });

  it("succeeds on a succeeded outcome without a marker, at the outcome's time", () => {
    expect(
      nextColdStart({ status: "dispatched", lastSequence: 3 }, some(), {
        status: "succeeded",
        endedAt: at(50),
      }),
    ).toEqual({ status: "succeeded", readyAt: at(50), finishedAt: at(50), actualSeconds: 42 });
  });

  it("fails on a failed outcome, keeping the phase and the error", () => {
    expect(
      nextColdStart({ status: "running", lastSequence: 3 }, some(), {
        status: "failed",
        failedPhase: "pull",
        error: "registry answered 503",
        endedAt: at(9),
      }),
    ).toEqual({
      status: "failed",
      failedPhase: "pull",
      error: "registry answered 503",
      finishedAt: at(9),
    });
  });

  it("lets a stored ready marker win over a failed outcome in the same batch", () => {
    expect(
      nextColdStart({ status: "running", lastSequence: 3 }, some({ readyAt: at(10) }), {
        status: "failed",
        failedPhase: "warmup",
        endedAt: at(11),
      }),
    ).toMatchObject({ status: "succeeded" });
  });

  it("never moves a final cold start again, but follows its sequence", () => {
    for (const status of ["succeeded", "failed", "cancelled"] as const) {
      expect(
        nextColdStart({ status, lastSequence: 3 }, some({ readyAt: at(1) }), {
          status: status === "succeeded" ? "failed" : "succeeded",
          failedPhase: "start",
          endedAt: at(2),
        }),
      ).toBeNull();
      expect(
        nextColdStart({ status, lastSequence: 1 }, some({ maxSequence: 5 }), undefined),
      ).toEqual({ lastSequence: 5 });
    }
  });

  it("never lowers lastSequence", () => {
    expect(
      nextColdStart({ status: "running", lastSequence: 9 }, some({ maxSequence: 4 }), undefined),
    ).toBeNull();
  });
});

describe("actualSecondsOf", () => {
  it("is null rather than 0 when nothing was measured (history works in log space)", () => {
    expect(actualSecondsOf(none)).toBeNull();
    expect(actualSecondsOf(some({ secondsSum: 12.5 }))).toBe(12.5);
  });
});

describe("nextReplicaState", () => {
  const all: ReplicaState[] = [
    "pending",
    "placed",
    "starting",
    "ready",
    "warm",
    "draining",
    "stopped",
    "failed",
  ];
  const moved = (status: ColdStartStatus) =>
    all.filter((s) => nextReplicaState(status, s) !== null);

  it("makes a placed or starting replica ready when its cold start succeeds", () => {
    expect(moved("succeeded")).toEqual(["placed", "starting"]);
    expect(nextReplicaState("succeeded", "starting")).toBe("ready");
  });

  it("fails only a replica still coming up; draining, stopped, ready and warm stay", () => {
    expect(moved("failed")).toEqual(["placed", "starting"]);
    expect(nextReplicaState("failed", "placed")).toBe("failed");
  });

  it("leaves replicas alone for cold starts that did not close", () => {
    for (const status of ["scheduled", "dispatched", "running", "cancelled"] as const)
      expect(moved(status)).toEqual([]);
  });
});
