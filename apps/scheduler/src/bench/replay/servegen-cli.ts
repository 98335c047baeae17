// pnpm --silent bench:servegen --out <dir> [--endpoints N] [--days D] [--seed S] [--target T]
//                              [--dir <servegen dir>] [--lengths <azure-llm csv>] [--demand]
// Writes the ServeGen workload (servegen-workload.ts) for inspection: <out>/servegen-trace.csv
// in the events format (timestamp_s,endpoint,duration_s; bench-contracts.md) and
// <out>/servegen-endpoints.json ({ "endpoints": { name: EndpointSpec } }, a fleet file's
// `endpoints`). Prints one JSON summary on stdout; bad input exits 2 naming the flag.
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { gpuDemand } from "./gpu-demand.ts";
import { InputError } from "./replay-input.ts";
import { DEFAULT_TARGET_REQUESTS, generateServeGenWorkload } from "./servegen-workload.ts";

function fail(message: string): never {
  console.error(`bench:servegen: ${message}`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      out: { type: "string" },
      endpoints: { type: "string" },
      days: { type: "string", default: "14" },
      seed: { type: "string", default: "1" },
      target: { type: "string", default: String(DEFAULT_TARGET_REQUESTS) },
      // The shared data sits beside the repository (../shared/data/traces, README there).
      dir: { type: "string", default: "../shared/data/traces/servegen" },
      lengths: { type: "string" },
      demand: { type: "boolean", default: false },
    },
    strict: true,
  }));
} catch (error) {
  fail((error as Error).message);
}
if (!values.out) fail("--out <dir> is required");

const whole = (flag: string, text: string | undefined): number | undefined => {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n)) fail(`--${flag} must be a whole number, not '${text}'`);
  return n;
};

try {
  const started = performance.now();
  const workload = generateServeGenWorkload({
    dir: resolve(values.dir),
    ...(values.endpoints !== undefined ? { endpoints: whole("endpoints", values.endpoints)! } : {}),
    days: whole("days", values.days)!,
    seed: whole("seed", values.seed)!,
    targetRequests: whole("target", values.target)!,
    ...(values.lengths ? { lengthsTrace: resolve(values.lengths) } : {}),
  });
  const generationSeconds = (performance.now() - started) / 1000;
  console.error(
    `[bench:servegen] ${workload.requests.length} requests, ${workload.clients.length} endpoints in ${generationSeconds.toFixed(2)} s`,
  );

  const out = resolve(values.out);
  mkdirSync(out, { recursive: true });
  const trace = join(out, "servegen-trace.csv");
  const lines = ["timestamp_s,endpoint,duration_s"];
  for (const r of workload.requests)
    lines.push(`${r.at.toFixed(3)},${r.endpoint},${r.seconds.toFixed(3)}`);
  writeFileSync(trace, lines.join("\n") + "\n");
  const endpointsFile = join(out, "servegen-endpoints.json");
  writeFileSync(endpointsFile, JSON.stringify({ endpoints: workload.endpoints }, null, 2) + "\n");

  const tally = (key: (c: (typeof workload.clients)[number]) => string) => {
    const counts: Record<string, number> = {};
    for (const c of workload.clients) counts[key(c)] = (counts[key(c)] ?? 0) + 1;
    return counts;
  };
  const requestsPerPool: Record<string, number> = {};
  for (const c of workload.clients)
    requestsPerPool[c.pool] = (requestsPerPool[c.pool] ?? 0) + c.requests;

  const summary: Record<string, unknown> = {
    trace,
    endpointsFile,
    requests: workload.requests.length,
    endpoints: workload.clients.length,
    scale: workload.scale,
    generationSeconds: Math.round(generationSeconds * 100) / 100,
    endpointsPerPool: tally((c) => c.pool),
    requestsPerPool,
    modelsDrawn: tally((c) => c.model),
    gpusByPlacement: tally((c) => `${c.gpus}x${c.gpuType}`),
  };
  if (values.demand) {
    // GPUs the trace holds under a keep-alive with instant starts (gpu-demand.ts): what the
    // replay fleets are sized against.
    const specs = Object.fromEntries(
      workload.clients.map((c) => {
        const spec = workload.endpoints[c.endpoint]!;
        return [c.endpoint, { gpuType: c.gpuType, gpus: c.gpus, concurrency: spec.concurrency! }];
      }),
    );
    summary.gpuDemand = Object.fromEntries(
      [0, 600, 3600].map((keepAlive) => [
        `keepAlive${keepAlive / 60}m`,
        gpuDemand(workload.requests, specs, keepAlive).map((d) => ({
          ...d,
          mean: Math.round(d.mean * 10) / 10,
        })),
      ]),
    );
  }
  console.log(JSON.stringify(summary, null, 2));
} catch (error) {
  if (error instanceof InputError) fail(error.message);
  throw error;
}
