import { mulberry32 } from "../cold-start-model/index.ts";
import type { LoadMinute } from "../what-if/index.ts";

/**
 * A seeded week (or `days`) of an endpoint's per-minute load as signals would record it: a
 * working-hours tide with bursts, quiet nights with sparse requests and idle gaps (where a
 * keep-alive decides everything), peaks around `peak` requests in flight. For the what-if's
 * tests, its benchmark and the e2e run; never product code.
 */
export function syntheticLoadMinutes(o: {
  from: Date;
  days?: number;
  peak?: number;
  seed?: number;
}): LoadMinute[] {
  const random = mulberry32(o.seed ?? 1);
  const peak = o.peak ?? 16;
  const minutes = (o.days ?? 7) * 1440;
  const start = Math.floor(o.from.getTime() / 60_000) * 60_000;
  const out: LoadMinute[] = [];
  let burst = 0;
  for (let i = 0; i < minutes; i++) {
    const at = new Date(start + i * 60_000);
    const hour = at.getUTCHours() + at.getUTCMinutes() / 60;
    const weekend = at.getUTCDay() === 0 || at.getUTCDay() === 6;
    // The tide: high from 8 to 18 UTC, low at night; a weekend is a third of a weekday.
    const tide = Math.max(0, Math.sin(((hour - 6) / 24) * 2 * Math.PI)) * (weekend ? 0.33 : 1);
    if (burst > 0) burst--;
    else if (random() < 0.004) burst = 3 + Math.floor(random() * 10);
    let mean = tide * peak * 0.4 * (0.7 + 0.6 * random()) + (burst > 0 ? peak * 0.5 : 0);
    // Nights: a request now and then, and whole minutes of nothing.
    if (mean < 0.5) mean = random() < 0.15 ? 0.2 + random() * 0.8 : 0;
    if (mean <= 0) continue;
    const signals = 30;
    const max = Math.max(1, Math.min(peak * 2, Math.ceil(mean * (1.2 + random() * 0.6))));
    out.push({ minute: at, maxConcurrency: max, sumConcurrency: mean * signals, signals });
  }
  return out;
}
