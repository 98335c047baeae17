// pnpm --silent bench:replay --trace <file|servegen dir> --fleet <fleet.json>
//   [--format azure-llm|events|servegen[,table]] [--endpoint <name>] [--seed N] [--json]
//   [--points contract|frontiers] [--plot <file.svg>] [--workers N]
//   [--endpoints N] [--days D] [--requests N]        (servegen: clients, days, requests)
// Replays a trace once per policy point (replay-engine.ts), in worker processes, and prints
// one JSON document (bench-contracts.md): `policies` (the contract's names), `frontiers` (each
// family swept over its setting), the target checks and how long it took; or, with
// `--format …,table`, the same as tables. Progress goes to stderr; bad input exits 2 naming
// the flag and why.
import { fork } from "node:child_process";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { frontierSvg } from "./frontier-plot.ts";
import {
  allReplayPolicies,
  checkTargets,
  compareSleeping,
  CONTRACT_POLICIES,
  contractIndex,
  frontiersOf,
  frontierTable,
  sleepingTable,
  type PolicyResult,
} from "@thaw/core/replay";
import { InputError } from "./replay-input.ts";
import { loadInputs, type ReplayJob, type TraceSource } from "./replay-run.ts";

function fail(message: string): never {
  console.error(`bench:replay: ${message}`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      trace: { type: "string" },
      fleet: { type: "string" },
      format: { type: "string" },
      endpoint: { type: "string" },
      seed: { type: "string", default: "1" },
      json: { type: "boolean", default: false },
      points: { type: "string", default: "frontiers" },
      plot: { type: "string" },
      workers: { type: "string" },
      endpoints: { type: "string" },
      days: { type: "string" },
      requests: { type: "string" },
    },
    strict: true,
  }));
} catch (error) {
  fail((error as Error).message);
}
if (!values.trace) fail("--trace <file> is required");
if (!values.fleet) fail("--fleet <fleet.json> is required");
const formats = (values.format ?? "").split(",").filter((f) => f !== "");
const TRACE_FORMATS = ["azure-llm", "events", "servegen"] as const;
for (const f of formats)
  if (!(TRACE_FORMATS as readonly string[]).includes(f) && f !== "table" && f !== "json")
    fail(`--format takes azure-llm, events or servegen, and table; not '${f}'`);
const table = formats.includes("table");
const traceFormat =
  formats.find((f): f is (typeof TRACE_FORMATS)[number] =>
    (TRACE_FORMATS as readonly string[]).includes(f),
  ) ??
  (existsSync(values.trace) && statSync(values.trace).isDirectory() ? "servegen" : "azure-llm");
const whole = (flag: string, value: string | undefined, min: number) => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    fail(`${flag} must be a whole number ≥ ${min}, not '${value}'`);
  return n;
};
const seed = Number(values.seed);
if (!Number.isInteger(seed)) fail(`--seed must be an integer, not '${values.seed}'`);
if (values.points !== "contract" && values.points !== "frontiers")
  fail(`--points must be 'contract' or 'frontiers', not '${values.points}'`);
const workers = whole("--workers", values.workers, 1) ?? Math.max(1, availableParallelism());

const endpointsWanted = whole("--endpoints", values.endpoints, 1);
const days = whole("--days", values.days, 1);
const targetRequests = whole("--requests", values.requests, 1);
const trace: TraceSource =
  traceFormat === "servegen"
    ? {
        kind: "servegen",
        dir: values.trace,
        seed,
        ...(endpointsWanted !== undefined ? { endpoints: endpointsWanted } : {}),
        ...(days !== undefined ? { days } : {}),
        ...(targetRequests !== undefined ? { targetRequests } : {}),
      }
    : {
        kind: "file",
        path: values.trace,
        format: traceFormat,
        ...(values.endpoint ? { endpoint: values.endpoint } : {}),
      };

const started = performance.now();
const policies = allReplayPolicies();
const wanted =
  values.points === "contract"
    ? [
        ...new Set([
          ...Object.keys(CONTRACT_POLICIES).map((name) => contractIndex(policies, name)),
          policies.findIndex((p) => p.family === "thaw-no-peer"),
          policies.findIndex((p) => p.family === "thaw-no-kernel-cache"),
        ]),
      ]
    : policies.map((_, i) => i);

try {
  // Read the inputs once here: bad input fails before any worker starts.
  const { requests, fleet } = loadInputs(trace, values.fleet);
  for (const name of new Set(requests.map((r) => r.endpoint))) fleet.endpoint(name);
  console.error(
    `[bench:replay] ${requests.length} requests, ${new Set(requests.map((r) => r.endpoint)).size} endpoint(s), ${fleet.hosts.length} hosts; ${wanted.length} policy points on ${workers} worker(s)`,
  );
} catch (error) {
  if (error instanceof InputError) fail(error.message);
  throw error;
}

const results = new Map<number, PolicyResult>();
const workerFile = fileURLToPath(new URL("./replay-worker.ts", import.meta.url));
// Slowest first (the clairvoyant looks ahead, thaw predicts), dealt round-robin.
const order = [...wanted].sort((a, b) => weight(policies[b]!.family) - weight(policies[a]!.family));
const shares = Array.from({ length: Math.min(workers, order.length) }, (_, w) =>
  order.filter((_, i) => i % workers === w),
);
await Promise.all(
  shares.map(
    (share) =>
      new Promise<void>((resolve, reject) => {
        const child = fork(workerFile, [], { execArgv: ["--import", "tsx"] });
        child.on(
          "message",
          (message: {
            kind: string;
            index?: number;
            result?: PolicyResult;
            seconds?: number;
            message?: string;
          }) => {
            if (message.kind === "result") {
              results.set(message.index!, message.result!);
              const p = policies[message.index!]!;
              console.error(
                `[bench:replay] ${p.family} ${p.setting}: mean wait ${message.result!.meanWaitSeconds} s, idle ${message.result!.idleGpuHours} GPU-h (${message.seconds!.toFixed(1)} s)`,
              );
            } else if (message.kind === "error") reject(new Error(message.message));
          },
        );
        child.on("exit", (code) =>
          code === 0 ? resolve() : reject(new Error(`a replay worker exited with ${code}`)),
        );
        const job: ReplayJob = { trace, fleetPath: values.fleet!, seed, policies: share };
        child.send(job);
      }),
  ),
);

function weight(family: string): number {
  return family === "clairvoyant"
    ? 3
    : family === "thaw" ||
        family === "oracle" ||
        family === "thaw-no-peer" ||
        family === "thaw-no-kernel-cache"
      ? 2
      : 1;
}

const named: Record<string, PolicyResult> = {};
for (const name of Object.keys(CONTRACT_POLICIES)) {
  const result = results.get(contractIndex(policies, name));
  if (result) named[name] = result;
}
// Single points beside the contract's: thaw on other windows, thaw without the peer path, and
// thaw without the kernel-cache store.
const SINGLE_POINTS = ["thaw-capped-hybrid", "thaw-no-peer", "thaw-no-kernel-cache"];
for (const family of SINGLE_POINTS) {
  const index = policies.findIndex((p) => p.family === family);
  if (results.has(index)) named[family] = results.get(index)!;
}
const frontierRuns = wanted
  .filter((i) => !["oracle", ...SINGLE_POINTS].includes(policies[i]!.family))
  .map((i) => ({ policy: policies[i]!, result: results.get(i)! }));
const frontiers = values.points === "frontiers" ? frontiersOf(frontierRuns) : undefined;
const targets = frontiers ? checkTargets(frontiers) : undefined;
const sleeping = frontiers ? compareSleeping(frontiers) : undefined;
const seconds = Math.round((performance.now() - started) / 100) / 10;

if (values.plot && frontiers)
  writeFileSync(
    values.plot,
    frontierSvg(frontiers, `bench:replay — ${values.trace} on ${values.fleet}`),
  );

if (table) {
  const lines = [
    `policies (${seconds} s):`,
    ...Object.entries(named).map(
      ([name, r]) =>
        `  ${name.padEnd(22)} mean ${r.meanWaitSeconds.toFixed(2)} s  p99 ${r.p99WaitSeconds.toFixed(1)} s  idle ${r.idleGpuHours.toFixed(2)} GPU-h  GPU ${r.gpuHours.toFixed(2)} h  cold ${(r.coldStartFraction * 100).toFixed(1)}%  idle-replica ${r.servedByIdleReplica}  handovers ${r.warmHandovers}`,
    ),
  ];
  if (frontiers && targets) lines.push("", frontierTable(frontiers, targets));
  if (sleeping && sleeping.length > 0) lines.push("", sleepingTable(sleeping));
  console.log(lines.join("\n"));
} else
  console.log(
    JSON.stringify(
      {
        policies: named,
        ...(frontiers ? { frontiers } : {}),
        ...(targets
          ? {
              targets: {
                rule: "for every point F of a fixed policy, thaw has a point with no more idle GPU-hours whose mean wait is at most max(0.5 × F's, 1.25 × the clairvoyant frontier's at F's idle GPU-hours)",
                met: targets.filter((t) => t.met).length,
                of: targets.length,
                checks: targets,
              },
            }
          : {}),
        ...(sleeping && sleeping.length > 0 ? { sleeping } : {}),
        seconds,
      },
      null,
      values.json ? 0 : 2,
    ),
  );
