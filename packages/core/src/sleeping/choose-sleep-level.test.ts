import { describe, expect, it } from "vitest";
import { PHYSICS } from "../cold-start-model/index.ts";
import { chooseSleepLevel, sleepBudgetBytes, sleepingEngineBytes } from "./choose-sleep-level.ts";
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
    const at = (memoryGiB: number | null, sleepingBytes = 0) =>
      chooseSleepLevel({
        memoryBytes: memoryGiB === null ? null : memoryGiB * GiB,
        gpuCount: 1,
        sleepingBytes,
        weightsBytes: 16e9,
      })?.sleepLevel ?? null;
    expect(at(64)).toBe(1);
    expect(at(16)).toBe(2);
    expect(at(4)).toBeNull();
    // An unknown memory is never over-committed.
    expect(at(null)).toBeNull();
    // What already sleeps there counts.
    expect(at(64, 40e9)).toBe(2);
    expect(at(64, 56e9)).toBeNull();
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
