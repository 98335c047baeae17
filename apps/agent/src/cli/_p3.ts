import { simulateColdStart } from "@thaw/core/cold-start-model";
import { VLLM_ENGINE } from "../../../../packages/core/src/cold-start-model/calibration-scenarios.ts";
for (const r of VLLM_ENGINE) {
  const res = simulateColdStart(r.scenario as any, {});
  console.log(r.id, r.targetSeconds, res.totalSeconds.toFixed(2), res.phases.map((p) => `${p.phase}=${p.seconds.toFixed(2)}`).join(" "));
}
