import { describe, expect, it } from "vitest";
import { cpuBetween, readCpu, THIS_PROCESS, withSameLoadRate } from "./process-cpu.ts";

/** Spins until this process has used `milliseconds` of CPU, however busy the machine is. */
function burn(milliseconds: number) {
  const start = process.cpuUsage();
  let x = 0;
  for (;;) {
    for (let i = 0; i < 10_000; i++) x += Math.sqrt(x + 1);
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1000 >= milliseconds) return x;
  }
}

describe("readCpu / cpuBetween", () => {
  it("charges CPU a process burns to its group, by pid and by Node's own count", () => {
    const groups = { self: { pids: [process.pid] }, nobody: { command: "no-such-command" } };
    const before = readCpu(groups);
    burn(300);
    const window = cpuBetween(before, readCpu(groups));
    // 300 ms of CPU, as /proc counts it (10 ms ticks) and as Node does.
    expect(window.seconds.self).toBeGreaterThan(0.25);
    expect(window.seconds[THIS_PROCESS]).toBeGreaterThan(0.25);
    expect(window.seconds.nobody).toBe(0);
    expect(window.cores).toBeGreaterThanOrEqual(1);
    // Node's own threads (GC, the JIT) count too, so 300 ms of CPU may take less than 300 ms
    // of wall time, but never less than spread over every core.
    expect(window.windowSeconds).toBeGreaterThanOrEqual(0.29 / window.cores);
    // The loop kept a core busy for its share of the window; anything else running only
    // adds to it.
    expect(window.busyCores).toBeGreaterThan(0.3 / window.windowSeconds - 0.1);
    expect(window.busyCores).toBeLessThanOrEqual(window.cores + 0.5);
  });
});

describe("withSameLoadRate", () => {
  it("adds the rate that loads these cores as the rate would load the larger shape, in order", () => {
    expect(withSameLoadRate([20, 50, 200], 200, 2, 16)).toEqual({
      rates: [20, 25, 50, 200],
      sameLoadRate: 25,
    });
    // Already among the rates: measured once.
    expect(withSameLoadRate([25, 200], 200, 2, 16).rates).toEqual([25, 200]);
    // Never below one event a second.
    expect(withSameLoadRate([1], 1, 2, 16)).toEqual({ rates: [1], sameLoadRate: 1 });
  });
});
