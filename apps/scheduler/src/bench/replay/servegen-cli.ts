// pnpm --silent bench:servegen --out <dir> [--endpoints N] [--days D] [--seed S] [--target T]
//                              [--dir <servegen dir>] [--lengths <azure-llm csv>]
//                              [--demand [--fleet <fleet.json>]]
// Writes the ServeGen workload (servegen-workload.ts) for inspection: <out>/servegen-trace.csv
// in the events format (timestamp_s,endpoint,duration_s; bench-contracts.md) and
// <out>/servegen-endpoints.json ({ "endpoints": { name: EndpointSpec } }, a fleet file's
// `endpoints`). Prints one JSON summary on stdout; bad input exits 2 naming the flag.
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { simulateColdStart } from "@thaw/core/cold-start-model";
import { gpuDemand } from "./gpu-demand.ts";
import { catalogueModel, endpointSpecForModel } from "./model-catalogue.ts";
import { InputError, parseFleet } from "./replay-input.ts";
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
      fleet: { type: "string" },
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
    // GPUs the trace holds under 0-, 10- and 60-minute keep-alives (gpu-demand.ts), by
    // placement: what the replay fleets are sized against. With --fleet, each replica is also
    // held through its start: the slower of a noiseless pull and lazy start of its model on
    // the fleet's host for it (the cold-start physics model).
    const fleet = values.fleet ? parseFleet(resolve(values.fleet)) : undefined;
    const startSeconds = new Map<string, number>();
    const startOf = (c: (typeof workload.clients)[number]): number => {
      if (!fleet) return 0;
      const known = startSeconds.get(c.model);
      if (known !== undefined) return known;
      const host = fleet.hosts.find((h) => h.gpuModel === c.gpuType && h.gpus >= c.gpus);
      if (!host)
        throw new InputError(`--fleet: no host has ${c.gpus} × ${c.gpuType} for ${c.model}`);
      const spec = endpointSpecForModel(catalogueModel(c.model));
      const seconds = Math.max(
        ...(["pull", "lazy"] as const).map(
          (path) =>
            simulateColdStart({
              seed: 1,
              noise: false,
              host: host.host,
              image: {
                format: path === "lazy" ? "estargz" : "oci",
                layers: spec.image.layers,
                readFraction: spec.image.readFraction,
              },
              engine: spec.engine,
              path,
            }).totalSeconds,
        ),
      );
      startSeconds.set(c.model, seconds);
      return seconds;
    };
    const specs = Object.fromEntries(
      workload.clients.map((c) => [
        c.endpoint,
        {
          gpuType: `${c.gpus}x${c.gpuType}`,
          gpus: c.gpus,
          concurrency: workload.endpoints[c.endpoint]!.concurrency!,
          startSeconds: startOf(c),
        },
      ]),
    );
    if (fleet)
      summary.startSeconds = Object.fromEntries(
        [...startSeconds].map(([model, seconds]) => [model, Math.round(seconds)]),
      );
    summary.gpuDemand = Object.fromEntries(
      [0, 600, 3600].map((keepAlive) => [
        `keepAlive${keepAlive / 60}m`,
        gpuDemand(workload.requests, specs, keepAlive).map((d) => ({
          placement: d.gpuType,
          peak: d.peak,
          p999: d.p999,
          p99: d.p99,
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
