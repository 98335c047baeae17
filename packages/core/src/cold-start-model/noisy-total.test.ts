import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { GPT_OSS_JOURNEY, RUNAI_STREAMER, VLLM_ENGINE } from "./calibration-scenarios";

const CALIBRATION_ROWS = [...GPT_OSS_JOURNEY, ...VLLM_ENGINE, ...RUNAI_STREAMER];
import { noiselessPhases, noisyTotalSeconds, simulateColdStart } from "./simulate-cold-start";

// bench:replay simulates the same start thousands of times with different seeds; it caches the
// noiseless phases and applies each seed's noise itself. That must be simulateColdStart.

describe("noiseless phases with each seed's noise", () => {
  it("total what simulateColdStart totals, for every calibration scenario and any seed", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CALIBRATION_ROWS),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (row, seed) => {
          const phases = noiselessPhases(row.scenario);
          const direct = simulateColdStart({ ...row.scenario, noise: true, seed });
          expect(noisyTotalSeconds(phases, seed)).toBeCloseTo(direct.totalSeconds, 6);
          const pull = direct.phases.find((p) => p.phase === "pull")?.seconds ?? 0;
          expect(noisyTotalSeconds(phases, seed, new Set(["pull"]))).toBeCloseTo(
            direct.totalSeconds - pull,
            2,
          );
        },
      ),
      { numRuns: 200 },
    );
  });
});
