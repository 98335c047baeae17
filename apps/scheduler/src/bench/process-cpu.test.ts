import { describe, expect, it } from "vitest";
import { cpuBetween, readCpu, THIS_PROCESS } from "./process-cpu.ts";

function burn(milliseconds: number) {
  const until = performance.now() + milliseconds;
  let x = 0;
  while (performance.now() < until) x += Math.sqrt(x + 1);
  return x;
}

describe("readCpu / cpuBetween", () => {
  it("charges CPU a process burns to its group, by pid and by Node's own count", () => {
    const groups = { self: { pids: [process.pid] }, nobody: { command: "no-such-command" } };
    const before = readCpu(groups);
    burn(300);
    const window = cpuBetween(before, readCpu(groups));
    // /proc counts in 10 ms ticks; 300 ms of a busy loop is at least ~200 ms on a loaded box.
    expect(window.seconds.self).toBeGreaterThan(0.2);
    expect(window.seconds[THIS_PROCESS]).toBeGreaterThan(0.2);
    expect(window.seconds.nobody).toBe(0);
    expect(window.windowSeconds).toBeGreaterThanOrEqual(0.3);
    expect(window.cores).toBeGreaterThanOrEqual(1);
    // The loop kept one core busy: the machine was at least about that busy.
    expect(window.busyCores).toBeGreaterThan(0.5);
    expect(window.busyCores).toBeLessThanOrEqual(window.cores + 0.5);
  });
});
