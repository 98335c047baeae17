import { describe, expect, it } from "vitest";
import { PHYSICS } from "../cold-start-model/index.ts";
import { planSleep, sleepBudgetBytes, sleepingEngineBytes } from "./choose-sleep-level.ts";
import { engineSleepCalls } from "./engine-sleep-calls.ts";

const GiB = 2 ** 30;

describe("where a sleeping engine fits", () => {
  it("holds its process, and at level 1 its weights", () => {
    expect(sleepingEngineBytes(16e9, 1)).toBe(PHYSICS.engineHostProcessBytes + 16e9);
    expect(sleepingEngineBytes(16e9, 2)).toBe(PHYSICS.engineHostProcessBytes);
  });

  it("keeps the reserve and each GPU's serving engine out of the budget", () => {
    expect(sleepBudgetBytes(384 * GiB, 4)).toBeCloseTo(
      384 * GiB * 0.9 - 4 * PHYSICS.engineHostProcessBytes,
      0,
    );
    expect(sleepBudgetBytes(2 * GiB, 1)).toBe(0);
  });

  it("sleeps at level 1 where the weights fit, at level 2 where only the process does, else not", () => {
    const at = (memoryGiB: number | null) =>
      planSleep({
        memoryBytes: memoryGiB === null ? null : memoryGiB * GiB,
        gpuCount: 1,
        sleepers: [],
        weightsBytes: 16e9,
      })?.sleepLevel ?? null;
    expect(at(64)).toBe(1);
    expect(at(16)).toBe(2);
    expect(at(2)).toBeNull();
    // An unknown memory is never over-committed.
    expect(at(null)).toBeNull();
  });

  it("makes room by evicting the engines asleep longest, and no more than it needs", () => {
    const sleepers = [
      { id: "oldest", bytes: 20e9 },
      { id: "older", bytes: 20e9 },
      { id: "newest", bytes: 10e9 },
    ];
    // 64 GiB: a budget of ~58 GB, 50 GB asleep, 19.4 GB wanted: the oldest goes.
    const plan = planSleep({ memoryBytes: 64 * GiB, gpuCount: 1, sleepers, weightsBytes: 16e9 });
    expect(plan).toMatchObject({ sleepLevel: 1, evict: [{ id: "oldest" }] });
    const roomy = planSleep({ memoryBytes: 256 * GiB, gpuCount: 1, sleepers, weightsBytes: 16e9 });
    expect(roomy).toMatchObject({ sleepLevel: 1, evict: [] });
    // Property: what stays asleep plus the newcomer never exceeds the budget.
    for (const memoryGiB of [8, 16, 32, 64, 128])
      for (const weightsBytes of [1e9, 16e9, 60e9]) {
        const p = planSleep({ memoryBytes: memoryGiB * GiB, gpuCount: 1, sleepers, weightsBytes });
        if (!p) continue;
        const kept = sleepers.filter((s) => !p.evict.includes(s)).reduce((n, s) => n + s.bytes, 0);
        expect(kept + p.bytes).toBeLessThanOrEqual(sleepBudgetBytes(memoryGiB * GiB, 1));
      }
  });

  it("names vLLM's sleep API, and no other engine's", () => {
    expect(engineSleepCalls("vllm", 2)).toEqual({
      engineSleep: { path: "/sleep?level=2" },
      engineWake: { path: "/wake_up" },
      engineAfterWake: [
        { path: "/collective_rpc", body: '{"method":"reload_weights"}' },
        { path: "/reset_prefix_cache" },
      ],
    });
    for (const engine of ["sglang", "llama.cpp", "tgi", "triton", "custom"])
      expect(engineSleepCalls(engine, 1)).toBeNull();
  });
});
