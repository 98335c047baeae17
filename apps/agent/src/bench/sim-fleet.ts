// Benchmark: 1,000 simulated hosts in ONE agent process (src/main.ts, spawned as a child
// exactly as the README runs it), heartbeating every 5 s and serving starts as fast as a
// scheduler-like driver can keep them busy. Prints one JSON document on stdout.
//
//   npx tsx src/bench/sim-fleet.ts [--hosts 1000] [--seconds 30] [--warmup 10] [--ramp 5]
//                                  [--time-factor 1000] [--concurrency 1000] [--type g5.xlarge]
//
// What it measures against: the control plane's agent API (join, heartbeat, telemetry) is
// served by a minimal HTTP server in this process that validates with the protocol schemas
// and counts (src/testing/fake-control-plane.ts) — no Postgres, no Next.js. So the figures
// are the agent's capacity, not the control plane's. The driver plays the scheduler: it
// calls each host's agent API as the scheduler does, signed and pinned (startReplica, then stopReplica
// once the start's outcome arrived as telemetry) and keeps `concurrency` starts in flight.
import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { quantile } from "@thaw/core/statistics";
import { type AgentClient, keepAliveFetch } from "@thaw/node-agent-client";
import { type ReplicaSimulation, type StartReplicaRequestInput } from "@thaw/protocol";
import { FakeControlPlane, type FakeNode } from "../testing/fake-control-plane.ts";

const { values: args } = parseArgs({
  options: {
    hosts: { type: "string", default: "1000" },
    seconds: { type: "string", default: "30" },
    warmup: { type: "string", default: "10" },
    ramp: { type: "string", default: "5" },
    "time-factor": { type: "string", default: "1000" },
    concurrency: { type: "string", default: "1000" },
    type: { type: "string", default: "g5.xlarge" },
  },
});
const numberArg = (name: keyof typeof args, min: number) => {
  const value = Number(args[name]);
  if (!Number.isFinite(value) || value < min) {
    process.stderr.write(`sim-fleet: --${name} must be a number >= ${min}\n`);
    process.exit(2);
  }
  return value;
};
const HOSTS = numberArg("hosts", 1);
const SECONDS = numberArg("seconds", 1);
const WARMUP = numberArg("warmup", 0);
const RAMP = numberArg("ramp", 0);
const TIME_FACTOR = numberArg("time-factor", 1);
const CONCURRENCY = numberArg("concurrency", 1);
const TYPE = args.type ?? "g5.xlarge";

const progress = (message: string) => process.stderr.write(`[sim-fleet] ${message}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A 7B-class model: 14 GB image with the weights baked in, vLLM-like engine. */
const SIMULATION: ReplicaSimulation = {
  layers: [
    { bytes: 13_000_000_000, compression: "gzip-6", content: "weights" },
    { bytes: 1_500_000_000, compression: "gzip-6", content: "code" },
  ],
  readFraction: 0.95,
  engine: {
    weightsBytes: 13_000_000_000,
    loader: "concurrent",
    loaderConcurrency: 8,
    initSeconds: 8,
    compileSeconds: 25,
    graphCaptureSeconds: 20,
    warmupSeconds: 10,
  },
};
const DEPLOYMENTS = Array.from({ length: 4 }, (_, i) => ({
  deploymentId: randomUUID(),
  imageRef: `registry.bench/thaw/model-${i}:v1`,
  estargzImageRef: `registry.bench/thaw/model-${i}:v1-esgz`,
  simulation: SIMULATION,
}));

// --- the stand-in control plane --------------------------------------------------------------

const cp = new FakeControlPlane();
const heartbeatTimes: number[] = [];
const outcomeTimes: number[] = [];
const waiting = new Map<string, () => void>();
let driving = true;
let failedStarts = 0;
cp.onHeartbeat = () => heartbeatTimes.push(performance.now());
cp.onOutcome = (outcome) => {
  outcomeTimes.push(performance.now());
  // After the window the agent is stopped: starts it hands back are failures by design.
  if (outcome.status === "failed" && driving && ++failedStarts <= 3)
    progress(`start failed: ${outcome.failedPhase}: ${outcome.error}`);
  waiting.get(outcome.coldStartId)?.();
};
const cpUrl = await cp.start();

// --- the agent process -------------------------------------------------------------------------

const appDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const state = mkdtempSync(join(tmpdir(), "thaw-bench-fleet-"));
writeFileSync(
  join(state, "join-tokens"),
  Array.from({ length: HOSTS }, (_, i) => `bench-token-${i}`).join("\n") + "\n",
);
// Node itself with tsx as a loader (not the tsx CLI wrapper): signals reach the agent as
// they would under systemd. THAW_BENCH_AGENT_NODE_ARGS adds flags, e.g. "--cpu-prof".
const nodeArgs = (process.env.THAW_BENCH_AGENT_NODE_ARGS ?? "").split(" ").filter(Boolean);
const metricsToken = randomBytes(24).toString("base64url");
const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", "src/main.ts"], {
  cwd: appDir,
  env: {
    ...process.env,
    THAW_CONTROL_PLANE_URL: cpUrl,
    THAW_SIM_HOSTS: `${TYPE}:${HOSTS}`,
    THAW_SIM_HOST_PREFIX: "bench",
    THAW_JOIN_TOKENS_FILE: join(state, "join-tokens"),
    THAW_AGENT_STATE_DIR: state,
    THAW_AGENT_LISTEN: "127.0.0.1:0",
    THAW_SIM_TIME_FACTOR: String(TIME_FACTOR),
    THAW_AGENT_SHUTDOWN_GRACE_SECONDS: "2",
    THAW_AGENT_METRICS_TOKEN: metricsToken,
    LOG_LEVEL: "warn",
  },
  stdio: ["ignore", "ignore", "pipe"],
});
let agentLog = "";
child.stderr.on("data", (chunk: Buffer) => {
  agentLog = (agentLog + chunk.toString()).slice(-4_000);
});
const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
const fail = async (message: string): Promise<never> => {
  progress(`${message}\n--- agent stderr (tail) ---\n${agentLog}`);
  child.kill("SIGKILL");
  await cp.stop();
  process.exit(1);
};

progress(
  `spawned one agent process with ${HOSTS} × ${TYPE} sim hosts (time factor ${TIME_FACTOR}); waiting for joins`,
);
const joinStart = performance.now();
while (cp.nodes.size < HOSTS) {
  if (child.exitCode !== null) await fail(`agent exited (${child.exitCode})`);
  if (performance.now() - joinStart > 60_000)
    await fail(`only ${cp.nodes.size}/${HOSTS} hosts joined in 60 s`);
  await sleep(100);
}
const joinSeconds = (performance.now() - joinStart) / 1000;
progress(`all ${HOSTS} hosts joined in ${joinSeconds.toFixed(1)} s`);
const nodes = [...cp.nodes.values()];
const agentOrigin = new URL(nodes[0]?.agentUrl ?? "https://invalid").origin;
const agentCertSha256 = nodes[0]?.agentCertSha256;
const scrapeFetch = keepAliveFetch();

// --- the driver (plays the scheduler) ----------------------------------------------------------

interface Driven {
  node: FakeNode;
  client: AgentClient;
}
const free: Driven[] = nodes.map((node) => ({
  node,
  client: cp.agentClient(node.name, { timeoutMs: 30_000, retries: 0 }),
}));
let outstanding = 0;
let startErrors = 0;
const acceptLatenciesMs: number[] = [];

async function cycle(host: Driven): Promise<void> {
  const request: StartReplicaRequestInput = {
    replicaId: randomUUID(),
    coldStartId: randomUUID(),
    path: "pull",
    gpus: [0],
    deployment: DEPLOYMENTS[Math.floor(Math.random() * DEPLOYMENTS.length)]!,
    readiness: { port: 8000, timeoutSeconds: 1_800 },
  };
  const done = new Promise<void>((resolve) => waiting.set(request.coldStartId, resolve));
  try {
    const t0 = performance.now();
    await host.client.startReplica(request);
    acceptLatenciesMs.push(performance.now() - t0);
    await done;
    await host.client.stopReplica(request.replicaId);
  } catch (error) {
    if (!driving) return; // the agent is being stopped after the window
    startErrors++;
    if (startErrors <= 5)
      progress(`start failed: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    waiting.delete(request.coldStartId);
  }
}

function pump(rampSeconds = 0): void {
  while (driving && outstanding < CONCURRENCY && free.length > 0) {
    const host = free.splice(Math.floor(Math.random() * free.length), 1)[0]!;
    outstanding++;
    const run = () =>
      void cycle(host).finally(() => {
        outstanding--;
        free.push(host);
        pump();
      });
    // The first starts are spread over the ramp, so hosts do not move in lockstep waves.
    if (rampSeconds > 0) setTimeout(run, Math.random() * rampSeconds * 1000);
    else run();
  }
}

// --- agent metrics -----------------------------------------------------------------------------

async function scrape(): Promise<Map<string, number>> {
  const response = await scrapeFetch(`${agentOrigin}/metrics`, {
    headers: { authorization: `Bearer ${metricsToken}` },
    certSha256: agentCertSha256,
  });
  const text = await response.text();
  const values = new Map<string, number>();
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) ([-+0-9.eE]+|NaN)$/.exec(line);
    if (match) values.set(match[1]!, Number(match[2]));
  }
  return values;
}

pump(RAMP);
progress(`driving starts (${CONCURRENCY} in flight at most); warm-up ${WARMUP} s`);
await sleep(WARMUP * 1000);
const windowStart = performance.now();
const benchCpu0 = process.cpuUsage();
const before = await scrape(); // also resets the agent's event-loop histogram
const lagP99: number[] = [];
const lagMax: number[] = [];
for (let t = 0; t < SECONDS; t += 5) {
  await sleep(Math.min(5, SECONDS - t) * 1000);
  const sample = await scrape();
  lagP99.push((sample.get("nodejs_eventloop_lag_p99_seconds") ?? NaN) * 1000);
  lagMax.push((sample.get("nodejs_eventloop_lag_max_seconds") ?? NaN) * 1000);
}
const windowEnd = performance.now();
const after = await scrape();
const benchCpu = process.cpuUsage(benchCpu0);
driving = false;
progress("measurement window over; stopping the agent (SIGTERM)");

// --- figures -----------------------------------------------------------------------------------

const perSecond = (times: number[]) => {
  const bins = new Array<number>(Math.floor((windowEnd - windowStart) / 1000)).fill(0);
  for (const t of times) {
    const bin = Math.floor((t - windowStart) / 1000);
    if (bin >= 0 && bin < bins.length) bins[bin]!++;
  }
  return bins;
};
const quantileOf = (values: number[], q: number) =>
  quantile(values.filter(Number.isFinite), q) ?? NaN;
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;
const windowSeconds = (windowEnd - windowStart) / 1000;
const heartbeats = perSecond(heartbeatTimes);
const starts = perSecond(outcomeTimes);
const delta = (name: string) => (after.get(name) ?? 0) - (before.get(name) ?? 0);

child.kill("SIGTERM");
const exitCode = await Promise.race([exited, sleep(20_000).then(() => "timeout" as const)]);
if (exitCode === "timeout") child.kill("SIGKILL");
await cp.stop();

const result = {
  measuredAgainst:
    "a minimal in-process HTTP stand-in for the control plane's agent API (validates join/heartbeat/telemetry with the protocol schemas and counts; no Postgres, no web app): agent-side capacity only",
  hosts: HOSTS,
  instanceType: TYPE,
  agentProcesses: 1,
  timeFactor: TIME_FACTOR,
  concurrency: CONCURRENCY,
  windowSeconds: round(windowSeconds),
  joinSeconds: round(joinSeconds),
  heartbeatsPerSecond: {
    median: quantileOf(heartbeats, 0.5),
    min: Math.min(...heartbeats),
    expected: HOSTS / 5,
  },
  startsPerSecond: {
    mean: round(starts.reduce((a, b) => a + b, 0) / starts.length),
    median: quantileOf(starts, 0.5),
    min: Math.min(...starts),
    max: Math.max(...starts),
    note: "starts that reached ready (their outcome arrived at the control plane) per second of the window",
  },
  startAcceptLatencyMs: {
    p50: round(quantileOf(acceptLatenciesMs, 0.5)),
    p99: round(quantileOf(acceptLatenciesMs, 0.99)),
  },
  startsFailed: failedStarts,
  driverErrors: startErrors,
  telemetry: {
    recordsPerSecond: round(delta("thaw_agent_telemetry_records_total") / windowSeconds),
    batchesPerSecond: round(
      delta('thaw_agent_telemetry_batches_total{result="acknowledged"}') / windowSeconds,
    ),
    duplicatesAtControlPlane: cp.counts.duplicates,
    queueDepthAtEnd: after.get("thaw_agent_telemetry_queue_depth") ?? NaN,
  },
  heartbeatsFailed: delta('thaw_agent_heartbeats_total{result="failed"}'),
  agentEventLoopLagMs: {
    p99: { median: round(quantileOf(lagP99, 0.5)), max: round(Math.max(...lagP99)) },
    max: round(Math.max(...lagMax)),
    samples: lagP99.length,
    note: "nodejs_eventloop_lag_p99_seconds of the agent process per 5 s interval (prom-client, 10 ms resolution)",
  },
  agentCpuCores: round(delta("process_cpu_seconds_total") / windowSeconds, 2),
  agentRssMiB: round((after.get("process_resident_memory_bytes") ?? NaN) / 2 ** 20),
  benchProcessCpuCores: round((benchCpu.user + benchCpu.system) / 1e6 / windowSeconds, 2),
  agentExit: exitCode,
};
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
process.exit(0);
