// pnpm --silent bench:placement [--nodes 5000] [--replicas 10000] [--json]
//                                [--schedulers N] [--cpu-profile DIR] [--project-cores 16]
//                                [--rates 20,50,200]
//
// End-to-end placement through BullMQ and Postgres (bench-contracts.md): N simulated nodes
// as rows of a fresh database, R replicas wanted across endpoints, and the scheduler's real
// workers (reconcile → place → dispatch) placing them; each dispatch is a real call (signed,
// over TLS to the pinned certificate) to an agent stand-in that acknowledges like the sim
// agent does (the agent's own capacity is measured by apps/agent's sim-fleet bench; the
// stand-in does not check signatures). Baseline in the same run: the raw BullMQ drain
// rate of no-op jobs on the same Redis. Then dispatch latency — desire change to the agent's
// receipt of startReplica — at steady rates of scale events (--rates; 200/s is the issue's),
// and at the rate that loads this machine's cores as 200/s would load --project-cores.
// The scheduler runs as it is deployed: `src/main.ts` processes (--schedulers, default one per
// core, as a Node process uses one), sharing the queues; the agent stand-in runs in this
// process, apart from them, as the fleet would. JSON on stdout; progress on stderr.
// --cpu-profile DIR writes a V8 profile of each scheduler process (Chrome DevTools,
// speedscope) to find where its time goes. `cpu` in the JSON says what bounds placement:
// the CPU seconds per placement of the schedulers, PostgreSQL and Redis (from /proc), how
// busy the machine's cores were, and what the same work would place per second on
// --project-cores cores if CPU is what binds and it spreads over them.
import { spawn, type ChildProcess } from "node:child_process";
import { availableParallelism } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { generateAgentCallKeyPair } from "@thaw/node-agent-client";
import { startAgentStandIn } from "@thaw/node-agent-client/testing";
import { createTestDatabase } from "@thaw/db/testing";
import { DEMO_ENDPOINTS, demoDeploymentColumns } from "@thaw/db/seed";
import { databaseUrlEnv, presentEnv, redisUrlEnv } from "@thaw/core/env";
import { quantiles } from "@thaw/core/statistics";
import { Queue, Worker } from "bullmq";
import { z } from "zod";
import { createProducerConnection, createWorkerConnection } from "../redis.ts";
import { enqueue, createQueues } from "../queues.ts";
import {
  cpuBetween,
  readCpu,
  THIS_PROCESS,
  withSameLoadRate,
  type ProcessGroup,
} from "@thaw/core/testing";

const Args = z.object({
  nodes: z.coerce.number().int().min(1).max(50_000),
  replicas: z.coerce.number().int().min(1).max(100_000),
  json: z.boolean(),
  schedulers: z.coerce.number().int().min(1).max(16),
  "cpu-profile": z.string().min(1).optional(),
  "project-cores": z.coerce.number().int().min(1).max(1024),
  rates: z
    .string()
    .transform((v) => v.split(",").map((r) => Number(r.trim())))
    .pipe(z.array(z.number().int().min(1).max(10_000)).min(1)),
});

const schedulers: ChildProcess[] = [];
let stopping = false;

function fail(message: string): never {
  stopping = true;
  for (const child of schedulers) child.kill("SIGKILL");
  console.error(`bench:placement: ${message}`);
  process.exit(2);
}

let rawArgs;
try {
  rawArgs = parseArgs({
    options: {
      nodes: { type: "string", default: "5000" },
      replicas: { type: "string", default: "10000" },
      json: { type: "boolean", default: false },
      schedulers: { type: "string", default: String(availableParallelism()) },
      "cpu-profile": { type: "string" },
      "project-cores": { type: "string", default: "16" },
      rates: { type: "string", default: "20,50,200" },
    },
    strict: true,
  }).values;
} catch (error) {
  fail((error as Error).message);
}
const parsedArgs = Args.safeParse(rawArgs);
if (!parsedArgs.success)
  fail(parsedArgs.error.issues.map((i) => `--${i.path.join(".")}: ${i.message}`).join("; "));
const args = parsedArgs.data;
const GPUS_PER_NODE = 4;
/** The issue's rate of scale events, and its bar for desire → agent at that rate. */
const ISSUE_RATE = 200;
const TARGET_DISPATCH_P99_MS = 50;
if (args.nodes * GPUS_PER_NODE < args.replicas + 2_000)
  fail(
    `--nodes ${args.nodes} × ${GPUS_PER_NODE} GPUs cannot hold --replicas ${args.replicas} + 2,000`,
  );
// The dev services' addresses, by the same rules every app's env.ts applies.
const services = z
  .object({ DATABASE_URL: databaseUrlEnv, REDIS_URL: redisUrlEnv })
  .safeParse(presentEnv(process.env));
if (!services.success)
  fail(
    `${String(services.error.issues[0]!.path[0])} ${services.error.issues[0]!.message} (run \`bash infra/dev/services.sh\` first)`,
  );
const { REDIS_URL } = services.data;

const progress = (message: string) => console.error(`[bench:placement] ${message}`);
const callKeys = generateAgentCallKeyPair();
const prefix = `bench-placement-${Date.now()}`;
const database = await createTestDatabase();
const db = database.db;

// --- the agent stand-in: acknowledges every start (202) and notes when it arrived --------------
const received: { deploymentId: string; coldStartId: string; at: number }[] = [];
const agent = await startAgentStandIn(({ deploymentId, coldStartId }, at) =>
  received.push({ deploymentId, coldStartId, at }),
);
const agentUrl = agent.url;

// --- the fleet and the endpoints ---------------------------------------------------------------
const org = await db.org.create({ data: { slug: `bench-${Date.now()}`, name: "bench" } });
const model = DEMO_ENDPOINTS.find((e) => e.gpuType === "A10G")!.deployment;
progress(`creating ${args.nodes} nodes`);
for (let i = 0; i < args.nodes; i += 1_000) {
  await db.node.createMany({
    data: Array.from({ length: Math.min(1_000, args.nodes - i) }, (_, k) => ({
      orgId: org.id,
      name: `bench-${i + k}`,
      provider: "sim" as const,
      runtime: "sim" as const,
      instanceType: "g5.12xlarge",
      gpuModel: "A10G",
      gpuCount: GPUS_PER_NODE,
      vcpus: 48,
      networkGbps: 40,
      diskReadMiBps: 1_000,
      diskWriteMiBps: 1_000,
      pcieGBps: 12,
      state: "ready" as const,
      // Agents' heartbeats are not what this measures (apps/agent's sim-fleet bench does):
      // a heartbeat stamped past the run keeps every node alive without 5,000 writes a beat.
      lastHeartbeatAt: new Date(Date.now() + 24 * 3_600_000),
      agentUrl: `${agentUrl}/hosts/bench-${i + k}`,
      agentCertSha256: agent.certSha256,
    })),
  });
}
async function makeEndpoint(slug: string, desired: number) {
  const endpoint = await db.endpoint.create({
    data: {
      orgId: org.id,
      slug,
      name: slug,
      gpuType: "A10G",
      minReplicas: 0,
      maxReplicas: 100_000,
      desiredReplicas: desired,
    },
  });
  const deployment = await db.deployment.create({
    data: {
      orgId: org.id,
      endpointId: endpoint.id,
      version: 1,
      ...demoDeploymentColumns(model),
      status: "active",
    },
  });
  await db.endpoint.update({
    where: { id: endpoint.id },
    data: { activeDeploymentId: deployment.id },
  });
  return { endpointId: endpoint.id, deploymentId: deployment.id };
}
const PER_ENDPOINT = 500;
// Created at zero replicas: the schedulers are started first, then every endpoint is scaled
// up at once (a scale event each, as the REST hook would) and the clock starts.
const endpoints: { endpointId: string; deploymentId: string; desired: number }[] = [];
for (let left = args.replicas, i = 0; left > 0; left -= PER_ENDPOINT, i++)
  endpoints.push({
    ...(await makeEndpoint(`bench-${i}`, 0)),
    desired: Math.min(PER_ENDPOINT, left),
  });

const producer = createProducerConnection(REDIS_URL);
await producer.connect();
// Keys an interrupted earlier run left behind (this bench's own namespace only).
for (const key of await producer.keys("bench-placement-*")) await producer.del(key);

// --- baseline: raw BullMQ drain of no-op jobs, same Redis, same total concurrency -------------
progress(`baseline: draining ${args.replicas} no-op BullMQ jobs`);
const noopQueue = new Queue("noop", { connection: producer, prefix });
const noopConnection = createWorkerConnection(REDIS_URL);
const BULK = 1_000;
for (let i = 0; i < args.replicas; i += BULK)
  await noopQueue.addBulk(
    Array.from({ length: Math.min(BULK, args.replicas - i) }, (_, k) => ({
      name: "noop",
      data: { i: i + k },
      opts: { removeOnComplete: true },
    })),
  );
let drained = 0;
const t0 = performance.now();
const allDrained = new Promise<void>((resolve) => {
  const worker = new Worker("noop", () => Promise.resolve(), {
    connection: noopConnection,
    prefix,
    concurrency: 8,
  });
  worker.on("completed", () => {
    if (++drained === args.replicas) void worker.close().then(resolve);
  });
});
await allDrained;
const bullmqDrainPerSecond = args.replicas / ((performance.now() - t0) / 1000);
await noopQueue.obliterate({ force: true });
noopConnection.disconnect();

// --- placement, end to end ---------------------------------------------------------------------
progress(`placing ${args.replicas} replicas on ${args.nodes} nodes`);
const schedulerEnv = {
  ...process.env,
  DATABASE_URL: database.url,
  REDIS_URL,
  THAW_QUEUE_PREFIX: prefix,
  THAW_AGENT_CALL_KEY: callKeys.privateKey,
  LOG_LEVEL: "error",
};
const SCHEDULER_DIR = join(dirname(fileURLToPath(import.meta.url)), "../..");
const queues = createQueues(producer, prefix);
progress(`starting ${args.schedulers} scheduler process${args.schedulers === 1 ? "" : "es"}`);
for (let i = 0; i < args.schedulers; i++) {
  const profiling = args["cpu-profile"]
    ? ["--cpu-prof", `--cpu-prof-dir=${args["cpu-profile"]}`]
    : [];
  const child = spawn(process.execPath, [...profiling, "--import", "tsx", "src/main.ts"], {
    cwd: SCHEDULER_DIR,
    env: schedulerEnv,
    // Its log lines go to stderr: stdout carries the result alone.
    stdio: ["ignore", process.stderr, "inherit"],
  });
  child.on("exit", (code, signal) => {
    if (!stopping) fail(`scheduler process ${i} exited (${signal ?? code}) mid-run`);
  });
  schedulers.push(child);
}
async function stopSchedulers() {
  stopping = true;
  await Promise.all(
    schedulers.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
        }),
    ),
  );
}
// Every process's place and dispatch workers are listening before the clock starts.
const workersUp = async () =>
  Math.min(await queues.place.getWorkersCount(), await queues.dispatch.getWorkersCount());
const bootDeadline = performance.now() + 120_000;
while ((await workersUp()) < args.schedulers) {
  if (performance.now() > bootDeadline) fail("the scheduler processes did not start in 120 s");
  await new Promise((resolve) => setTimeout(resolve, 200));
}

// The control plane's processes; the agent stand-in is this process (the fleet's share).
const cpuGroups: Record<string, ProcessGroup> = {
  schedulers: { pids: schedulers.flatMap((child) => (child.pid ? [child.pid] : [])) },
  postgres: { command: "postgres" },
  redis: { command: "redis-server" },
};
const cpuBefore = readCpu(cpuGroups);
const started = performance.now();
// Every endpoint's scale event at once, as independent autoscalers' hook calls would arrive:
// one after another, each waited its turn behind the placements the earlier ones started.
await Promise.all(
  endpoints.map(async ({ endpointId, desired }) => {
    await db.endpoint.update({ where: { id: endpointId }, data: { desiredReplicas: desired } });
    await enqueue(queues, "reconcile", { endpointId });
  }),
);
let placed = 0;
let lastReport = 0;
while (placed < args.replicas) {
  await new Promise((resolve) => setTimeout(resolve, 200));
  placed = await db.coldStart.count({ where: { orgId: org.id } });
  if (performance.now() - lastReport > 5_000) {
    lastReport = performance.now();
    progress(`${placed} placed after ${((lastReport - started) / 1000).toFixed(1)} s`);
  }
  if (performance.now() - started > 30 * 60_000) {
    await stopSchedulers();
    fail("placement did not finish in 30 minutes");
  }
}
const placementSeconds = (performance.now() - started) / 1000;
const placementsPerSecond = args.replicas / placementSeconds;
const cpuWindow = cpuBetween(cpuBefore, readCpu(cpuGroups));
const msPerPlacement = (seconds: number) => round((seconds * 1000) / args.replicas, 3);
const controlPlaneSeconds =
  cpuWindow.seconds.schedulers! + cpuWindow.seconds.postgres! + cpuWindow.seconds.redis!;
const cpu = {
  windowSeconds: round(cpuWindow.windowSeconds),
  cores: cpuWindow.cores,
  busyCores: round(cpuWindow.busyCores),
  // CPU milliseconds each part spent per placement; "agentStandIn" is this process (the
  // stand-in the fleet's agents would be, and this bench's own polling).
  msPerPlacement: {
    schedulers: msPerPlacement(cpuWindow.seconds.schedulers!),
    postgres: msPerPlacement(cpuWindow.seconds.postgres!),
    redis: msPerPlacement(cpuWindow.seconds.redis!),
    controlPlane: msPerPlacement(controlPlaneSeconds),
    agentStandIn: msPerPlacement(cpuWindow.seconds[THIS_PROCESS]!),
  },
  // If CPU binds (busyCores near cores) and the work spreads over more cores (more scheduler
  // processes, PostgreSQL backends), this many cores of control plane place this many per
  // second; an upper bound, since lock waits and round trips do not shrink with cores.
  projection: {
    cores: args["project-cores"],
    placementsPerSecond:
      controlPlaneSeconds > 0
        ? round((args["project-cores"] * args.replicas) / controlPlaneSeconds)
        : 0,
  },
};
await waitUntil(() => received.length >= args.replicas, 120_000);

// --- dispatch latency at steady rates of scale events ------------------------------------------
const SECONDS = 10;
// The latency on --project-cores cores, measured here at the same load per core
// (withSameLoadRate). Conservative in that the sweep's and the stand-in's fixed work is spread
// over fewer cores here; not in that one PostgreSQL takes every endpoint's row locks (at the
// issue's rate each of 20 endpoints scales 10 times a second, here about once).
const issueRate = args.rates.includes(ISSUE_RATE) ? ISSUE_RATE : args.rates.at(-1)!;
const { rates: measuredRates, sameLoadRate } = withSameLoadRate(
  args.rates,
  issueRate,
  cpu.cores,
  args["project-cores"],
);
const atRates = [];
for (const [i, rate] of measuredRates.entries()) atRates.push(await dispatchLatencyAt(rate, i));
const atIssueRate = atRates.find((r) => r.scaleEventsPerSecond === issueRate)!;
const atSameLoad = atRates.find((r) => r.scaleEventsPerSecond === sameLoadRate)!;

/**
 * Desire change → the agent's receipt of startReplica, for SECONDS of `rate` scale events a
 * second over 20 fresh endpoints. Each event is sent when it is due, not after the one before
 * it: independent autoscalers' hook calls do not wait for each other, and a sender that did
 * (as this bench's did until 2026-11-27) falls behind a loaded database and offers less than
 * it claims: its "200 events/s" were 55.
 */
async function dispatchLatencyAt(rate: number, round_: number) {
  progress(`dispatch latency: ${rate} scale events/s for ${SECONDS} s`);
  const steady: { endpointId: string; deploymentId: string }[] = [];
  for (let i = 0; i < 20; i++) steady.push(await makeEndpoint(`steady-${round_}-${i}`, 0));
  const events = new Map<string, number[]>();
  const baseReceived = received.length;
  const count = rate * SECONDS;
  const cpuBefore = readCpu(cpuGroups);
  const steadyStart = performance.now();
  let lastSentAt = steadyStart;
  const sends: Promise<void>[] = [];
  for (let n = 0; n < count; n++) {
    const due = n * (1000 / rate);
    const wait = due - (performance.now() - steadyStart);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const target = steady[n % steady.length]!;
    sends.push(
      (async () => {
        await db.endpoint.update({
          where: { id: target.endpointId },
          data: { desiredReplicas: { increment: 1 } },
        });
        // In the order the increments committed: the k-th made the k-th replica.
        const at = performance.now();
        lastSentAt = Math.max(lastSentAt, at);
        events.set(target.deploymentId, [...(events.get(target.deploymentId) ?? []), at]);
        await enqueue(queues, "reconcile", { endpointId: target.endpointId });
      })(),
    );
  }
  await Promise.all(sends);
  // The rate the writes landed at: below `rate` when the database could not keep up.
  const sentPerSecond = count / ((lastSentAt - steadyStart) / 1000);
  // A control plane slower than the event rate falls behind: wait a while, then report what
  // was delivered rather than nothing.
  await waitUntil(() => received.length >= baseReceived + count, 60_000, false);
  const delivered = received.length - baseReceived;
  // What the rate costs and whether it saturates the machine: a latency measured on busy
  // cores is mostly queueing behind other events' work.
  const cpuWindow = cpuBetween(cpuBefore, readCpu(cpuGroups));
  const msPerEvent = (group: string) =>
    round(((cpuWindow.seconds[group] ?? 0) * 1000) / Math.max(1, delivered), 3);
  const cpuPerEvent = {
    schedulers: msPerEvent("schedulers"),
    postgres: msPerEvent("postgres"),
    redis: msPerEvent("redis"),
    // This process: the agent stand-in and the scale events' own writes.
    agentStandIn: msPerEvent(THIS_PROCESS),
  };
  const controlPlaneMs = cpuPerEvent.schedulers + cpuPerEvent.postgres + cpuPerEvent.redis;

  const latencies: number[] = [];
  for (const { deploymentId } of steady) {
    const sent = events.get(deploymentId) ?? [];
    const got = received
      .slice(baseReceived)
      .filter((r) => r.deploymentId === deploymentId)
      .map((r) => r.at);
    for (let k = 0; k < Math.min(sent.length, got.length); k++) latencies.push(got[k]! - sent[k]!);
  }
  const [p50Latency, p99Latency] = quantiles(latencies, [0.5, 0.99]);

  // Where the latency goes, per start: the k-th scale event of a deployment made its k-th
  // replica (reconcile), whose cold start was placed, then reached the agent. Stage ends are
  // the rows' own timestamps (Postgres now(): the writing transaction's start) and the
  // stand-in's receipt; the stages add up to the end-to-end figure. performance.now() moves
  // onto the wall clock Postgres shares (one host) by adding its time origin.
  const stageSamples = {
    reconcile: [] as number[],
    place: [] as number[],
    dispatch: [] as number[],
  };
  const receiptByColdStart = new Map(received.slice(baseReceived).map((r) => [r.coldStartId, r]));
  for (const { deploymentId } of steady) {
    const sent = (events.get(deploymentId) ?? []).map((at) => performance.timeOrigin + at);
    const replicas = await db.replica.findMany({
      where: { deploymentId },
      orderBy: { createdAt: "asc" },
      select: { createdAt: true, coldStarts: { select: { id: true, requestedAt: true } } },
    });
    for (let k = 0; k < Math.min(sent.length, replicas.length); k++) {
      const replica = replicas[k]!;
      const coldStart = replica.coldStarts[0];
      const receipt = coldStart ? receiptByColdStart.get(coldStart.id) : undefined;
      if (!coldStart || !receipt) continue;
      stageSamples.reconcile.push(replica.createdAt.getTime() - sent[k]!);
      stageSamples.place.push(coldStart.requestedAt.getTime() - replica.createdAt.getTime());
      stageSamples.dispatch.push(
        performance.timeOrigin + receipt.at - coldStart.requestedAt.getTime(),
      );
    }
  }
  const stages = Object.fromEntries(
    Object.entries(stageSamples).map(([stage, values]) => {
      const [p50, p99] = quantiles(values, [0.5, 0.99]);
      return [stage, { p50: round(p50 ?? 0), p99: round(p99 ?? 0), starts: values.length }];
    }),
  );
  return {
    scaleEventsPerSecond: rate,
    scaleEventsPerSecondSent: round(sentPerSecond),
    scaleEventsSent: count,
    scaleEventsDispatchedWithin60s: delivered,
    p50: round(p50Latency ?? 0),
    p99: round(p99Latency ?? 0),
    // API write -> replica created (reconcile) -> cold start placed -> agent received.
    stages,
    // From the first event until the last was received (or 60 s passed).
    cpu: {
      windowSeconds: round(cpuWindow.windowSeconds),
      busyCores: round(cpuWindow.busyCores),
      msPerEvent: cpuPerEvent,
      // The rate --project-cores cores of control plane sustain at half busy, where an
      // event waits little behind others' work (an M/M/c queue at 50% load); an upper
      // bound, as in the placement projection.
      projection: {
        cores: args["project-cores"],
        eventsPerSecondAtHalfLoad:
          controlPlaneMs > 0 ? round((0.5 * args["project-cores"] * 1000) / controlPlaneMs) : 0,
      },
    },
  };
}

await stopSchedulers();
await Promise.all(
  Object.values(queues).map((q) => q.obliterate({ force: true }).then(() => q.close())),
);
await noopQueue.close();
producer.disconnect();
agent.close();
await database.drop();

const result = {
  placementsPerSecond: round(placementsPerSecond),
  bullmqDrainPerSecond: round(bullmqDrainPerSecond),
  // At 200 scale events/s (the issue's rate) when it is among --rates, else the last rate;
  // `projection` is the same figure at that rate's load per core on --project-cores cores.
  dispatchLatencyMs: {
    p50: atIssueRate.p50,
    p99: atIssueRate.p99,
    stages: atIssueRate.stages,
    cpu: atIssueRate.cpu,
    projection: {
      cores: args["project-cores"],
      sameLoadPerCoreRateHere: sameLoadRate,
      p50: atSameLoad.p50,
      p99: atSameLoad.p99,
      busyCoresHere: atSameLoad.cpu.busyCores,
    },
    target: {
      p99: TARGET_DISPATCH_P99_MS,
      metHere: atIssueRate.p99 <= TARGET_DISPATCH_P99_MS,
      metProjected: atSameLoad.p99 <= TARGET_DISPATCH_P99_MS,
    },
  },
  dispatchLatencyAtRates: atRates,
  nodes: args.nodes,
  replicas: args.replicas,
  schedulerProcesses: args.schedulers,
  placementSeconds: round(placementSeconds),
  ratioToBullmqDrain: Math.round((placementsPerSecond / bullmqDrainPerSecond) * 10_000) / 10_000,
  scaleEventsPerSecond: atIssueRate.scaleEventsPerSecond,
  scaleEventsPerSecondSent: atIssueRate.scaleEventsPerSecondSent,
  scaleEventsSent: atIssueRate.scaleEventsSent,
  scaleEventsDispatchedWithin60s: atIssueRate.scaleEventsDispatchedWithin60s,
  cpu,
};
console.log(JSON.stringify(result, null, args.json ? 0 : 2));
process.exit(0);

function round(x: number, decimals = 1) {
  return Math.round(x * 10 ** decimals) / 10 ** decimals;
}
async function waitUntil(check: () => boolean, timeoutMs: number, mustFinish = true) {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) {
      if (!mustFinish) return;
      fail("timed out waiting for the agent stand-in");
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
