import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { PhaseRecorder } from "./phase-recorder.ts";
import { type PhaseEvent, PhaseFailedError } from "./runtime.ts";

describe("PhaseRecorder", () => {
  it("reports each phase as it ends, in order, without overlaps, and ready as a marker", async () => {
    const events: PhaseEvent[] = [];
    const rec = new PhaseRecorder((e) => events.push(e));
    await rec.run("pull", async (scope) => {
      await sleep(20);
      scope.bytes = 1234;
      scope.attributes.layers = 3;
    });
    await rec.run("create", async () => sleep(5));
    rec.mark("ready");
    expect(events.map((e) => e.phase)).toEqual(["pull", "create", "ready"]);
    expect(events[0]).toMatchObject({ bytes: 1234, attributes: { layers: 3 } });
    expect(events[0]!.seconds).toBeGreaterThanOrEqual(0.015);
    expect(events[1]).not.toHaveProperty("bytes");
    expect(events[1]).not.toHaveProperty("attributes");
    expect(events[2]).toMatchObject({ seconds: 0 });
    expect(events[2]!.startedAt).toBe(events[2]!.endedAt);
    for (let i = 1; i < events.length; i++) {
      expect(Date.parse(events[i]!.startedAt)).toBeGreaterThanOrEqual(
        Date.parse(events[i - 1]!.endedAt),
      );
    }
  });

  it("turns a failure into a PhaseFailedError naming the phase, and reports nothing for it", async () => {
    const events: PhaseEvent[] = [];
    const rec = new PhaseRecorder((e) => events.push(e));
    const error = await rec
      .run("create", async () => {
        await sleep(5);
        throw new Error("snapshot busy");
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PhaseFailedError);
    expect(error).toMatchObject({ phase: "create" });
    expect((error as PhaseFailedError).seconds).toBeGreaterThan(0);
    expect((error as Error).message).toMatch(
      /^create phase failed after \d\.\d{3} s: snapshot busy$/,
    );
    expect(events).toEqual([]);
  });

  it("holds a phase's event back while its bookkeeping settles, keeping the order", async () => {
    const events: PhaseEvent[] = [];
    const rec = new PhaseRecorder((e) => events.push(e));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    await rec.run(
      "pull",
      async () => sleep(5),
      async (scope) => {
        await gate;
        scope.bytes = 42;
      },
    );
    await rec.run("create", async () => sleep(5));
    expect(events).toEqual([]);
    release();
    await rec.flush();
    expect(events.map((e) => [e.phase, e.bytes])).toEqual([
      ["pull", 42],
      ["create", undefined],
    ]);
    // The pull's duration ended with its body, not with the bookkeeping.
    expect(events[0]!.seconds).toBeLessThan(0.5);
    expect(Date.parse(events[1]!.startedAt)).toBeGreaterThanOrEqual(Date.parse(events[0]!.endedAt));
  });

  it("reports a phase whose bookkeeping failed, with the reason", async () => {
    const events: PhaseEvent[] = [];
    const rec = new PhaseRecorder((e) => events.push(e));
    await rec.run(
      "pull",
      () => Promise.resolve(),
      () => Promise.reject(new Error("content store busy")),
    );
    await rec.flush();
    expect(events[0]).toMatchObject({
      phase: "pull",
      attributes: { settleError: "content store busy" },
    });
  });
});
