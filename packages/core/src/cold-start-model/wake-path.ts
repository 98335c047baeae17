import type { HostRates } from "./engine-phases";
import type { Physics } from "./physical-constants";
import { reinstatedWeightsPhases } from "./restore-path";
import type { ColdStartScenario, PhaseTiming } from "./scenario-schema";

// Wake: a sleeping engine on this host (vLLM `POST /wake_up`) kept its process, CUDA context,
// compiled kernels and CUDA graphs, so nothing is pulled, created, compiled or captured. The
// weights come back as its sleep level left them, then the engine re-allocates its KV cache
// and answers (the same wake a restore ends with, without CRIU).

export function wakePhases(
  scenario: ColdStartScenario,
  rates: HostRates,
  physics: Physics,
): PhaseTiming[] {
  const { wake, engine } = scenario;
  return [
    ...reinstatedWeightsPhases(wake.sleepLevel, wake, engine, rates, physics),
    { phase: "warmup", seconds: physics.engineWakeSeconds, bytes: 0 },
  ];
}
