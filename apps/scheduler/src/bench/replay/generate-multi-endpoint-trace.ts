// Writes multi-endpoint.csv (events format: timestamp_s,endpoint,duration_s), deterministic:
//   npx tsx apps/scheduler/src/bench/replay/generate-multi-endpoint-trace.ts > apps/scheduler/bench/traces/multi-endpoint.csv
// Six hours of six endpoints with the shapes serverless inference sees (Shahrad et al.'s
// Azure Functions study): a steady chat model, a diurnal one, a bursty batch job that
// arrives in clusters, two sparse endpoints called every ten-odd minutes, and a rare one.
import { mulberry32 } from "@thaw/core/cold-start-model";

const HOURS = 6;
const random = mulberry32(20261123);
const exp = (ratePerSecond: number) => -Math.log(1 - random()) / ratePerSecond;
const rows: [number, string, number][] = [];

function poisson(endpoint: string, rate: (t: number) => number, service: () => number) {
  // Thinning (Lewis–Shedler) against the peak rate.
  const peak = Math.max(...Array.from({ length: HOURS * 60 }, (_, m) => rate(m * 60)));
  for (let t = exp(peak); t < HOURS * 3600; t += exp(peak))
    if (random() < rate(t) / peak) rows.push([t, endpoint, service()]);
}

poisson(
  "chat-8b",
  () => 0.5,
  () => 2 + random() * 6,
);
poisson(
  "support-8b",
  (t) => 0.05 * (1 + Math.sin((2 * Math.PI * t) / (3 * 3600))),
  () => 3 + random() * 5,
);
// Bursts: a cluster of ~40 requests every ~45 minutes.
for (let t = 600; t < HOURS * 3600; t += 1800 + random() * 1800)
  for (let i = 0; i < 30 + Math.floor(random() * 20); i++)
    rows.push([t + random() * 60, "batch-20b", 5 + random() * 10]);
poisson(
  "sparse-1b",
  () => 1 / 700,
  () => 1 + random(),
);
poisson(
  "sparse-8b",
  () => 1 / 900,
  () => 2 + random() * 3,
);
poisson(
  "rare-20b",
  () => 1 / 3600,
  () => 4 + random() * 4,
);

rows.sort((a, b) => a[0] - b[0]);
console.log("timestamp_s,endpoint,duration_s");
for (const [t, endpoint, seconds] of rows)
  console.log(`${t.toFixed(3)},${endpoint},${seconds.toFixed(3)}`);
