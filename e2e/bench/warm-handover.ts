// pnpm --silent bench:warm-handover [--seconds 10] [--warm-up-seconds 2] [--rates 1,50,200]
//   [--schedulers 2] [--idle-endpoints 0] [--json]
//
// A warm handover end to end through the real server: `PUT /api/v1/endpoints/{e}/replicas`
// on the built dashboard (`next start`) to the agent's receipt of the handover, with parked
// replicas waiting, at each of --rates scale events per second for --seconds each, after
// --warm-up-seconds at that rate that are reported apart (warmUp) and not timed.
//
// The fleet: every endpoint has one replica parked (`warm`, its GPU held) on a node — what
// the warm pool keeps per endpoint beyond minReplicas — and a scale event takes one endpoint
// from 0 to 1 (a scale from zero), so each event finds its own parked replica; a tenth of the
// nodes are left free, so the chooser weighs the handover against cold paths. The schedulers
// run as deployed (`src/main.ts` processes, sharing the queues) and dispatch each start as
// a real call (signed, over TLS to the pinned certificate) to an agent stand-in in this
// process, which acknowledges like the sim agent (202) and notes the arrival.
// Baseline in the same run, at the same rate: a bare HTTPS round trip to that stand-in.
//
// The warm pool runs with hybrid windows (an hour's keep-alive) and a budget that holds every
// parked replica, so its sweeps keep them; the sweeps themselves (reconcile and warm pool of
// every endpoint every 15 s) run as they do in production; the windows begin once the first
// sweep has tended every endpoint (a running control plane, not a fleet's first minute). Each
// rate's window also says where the CPU went, per process, whether the machine's cores were
// saturated, and what rate the production shape (16 cores) would carry at half load;
// `projection` is the largest rate's p99 over the bare round trip measured at the rate that
// loads each core here as it would load 16 (25/s for 200/s on 2 cores). JSON on stdout, progress on stderr.
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { availableParallelism } from "node:os";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { parseArgs } from "node:util";
import { createApiKey } from "@thaw/core";
import { quantiles } from "@thaw/core/statistics";
import {
  cpuBetween,
  readCpu,
  THIS_PROCESS,
  withSameLoadRate,
  type ProcessGroup,
} from "@thaw/core/testing";
import { DEMO_ENDPOINTS, demoDeploymentColumns } from "@thaw/db/seed";
import { startAgentStandIn } from "@thaw/node-agent-client/testing";
import { startProcess } from "../src/process.ts";
import { startWebServer, type WebServer } from "../src/web-server.ts";
import { clearQueuePrefix, ensureDashboardBuilt } from "./bench-kit.ts";

/** The bar: the control plane adds at most this much to the bare round trip's p99. */
const TARGET_P99_OVER_BARE_MS = 100;
const GPUS_PER_NODE = 4;
/** infra/deploy's production shape: the cores the projection spreads this run's CPU over. */
const PROJECT_CORES = 16;

const USAGE =
  "usage: bench:warm-handover [--seconds 1..120] [--warm-up-seconds 0..60] [--rates r1,r2,… each 1..1000] [--schedulers 1..8] [--idle-endpoints 0..20000]";
const options = {
  seconds: { type: "string", default: "10" },
  "warm-up-seconds": { type: "string", default: "2" },
  rates: { type: "string", default: "1,50,200" },
  schedulers: { type: "string", default: "2" },
  "idle-endpoints": { type: "string", default: "0" },
  json: { type: "boolean", default: false },
} as const;
let parsed: ReturnType<typeof parseArgs<{ options: typeof options }>>;
try {
  parsed = parseArgs({ options });
} catch (error) {
  // An unknown option, or a value missing: say which, and how to call, not a stack trace.
  console.error(`${(error as Error).message}\n${USAGE}`);
  process.exit(2);
}
const { values } = parsed;
const seconds = Number(values.seconds);
/** Each rate's first seconds, not timed: the step from the last rate to this one settles. */
const warmUpSeconds = Number(values["warm-up-seconds"]);
const rates = values.rates.split(",").map(Number);
const schedulerCount = Number(values.schedulers);
/** Endpoints with a parked replica that no event touches: the rest of a larger fleet. */
const idleEndpoints = Number(values["idle-endpoints"]);
if (
  !(Number.isInteger(seconds) && seconds >= 1 && seconds <= 120) ||
  !(Number.isInteger(warmUpSeconds) && warmUpSeconds >= 0 && warmUpSeconds <= 60) ||
  !rates.every((r) => Number.isInteger(r) && r >= 1 && r <= 1000) ||
  !(Number.isInteger(schedulerCount) && schedulerCount >= 1 && schedulerCount <= 8) ||
  !(Number.isInteger(idleEndpoints) && idleEndpoints >= 0 && idleEndpoints <= 20_000)
) {
  console.error(USAGE);
  process.exit(2);
}

const say = (message: string) => process.stderr.write(`[bench:warm-handover] ${message}\n`);

// The largest rate's latency projected onto PROJECT_CORES, measured here at the same load per
// core (withSameLoadRate, as bench:placement does). Conservative in that the sweep's work for
// the whole fleet is spread over fewer cores here.
const projectedRate = Math.max(...rates);
const { rates: measuredRates, sameLoadRate } = withSameLoadRate(
  rates,
  projectedRate,
  availableParallelism(),
  PROJECT_CORES,
);

ensureDashboardBuilt(say);

// --- the agent stand-in: acknowledges every start (202) and notes when it first arrived -------
const received = new Map<string, { at: number; path: string; coldStartId: string }>();
const agent = await startAgentStandIn(({ deploymentId, coldStartId, path }, at) => {
  if (deploymentId && coldStartId && !received.has(deploymentId))
    received.set(deploymentId, { at, path, coldStartId });
});
const agentUrl = agent.url;

const logs: string[] = [];
const schedulers: ChildProcess[] = [];
let server: WebServer | undefined;
let exitCode = 0;
try {
  server = await startWebServer({
    logs,
    env: {
      LOG_LEVEL: "warn",
      // Every request comes from 127.0.0.1 with one key: the limits would turn the run into
      // 429s. Their Redis checks still run.
      THAW_REST_RATE_LIMIT_PER_MINUTE: "1000000",
      THAW_REST_RATE_LIMIT_PER_ORG_PER_MINUTE: "1000000",
      THAW_API_RATE_LIMIT_PER_ADDRESS_PER_MINUTE: "1000000",
    },
    // THAW_BENCH_WEB_CPU_PROFILE=<dir>: the web server writes a V8 CPU profile there.
    ...(process.env.THAW_BENCH_WEB_CPU_PROFILE
      ? { nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${process.env.THAW_BENCH_WEB_CPU_PROFILE}`] }
      : {}),
  });
  const { db } = server.database;
  const orgId = server.orgId;
  const { secret } = await createApiKey({
    actor: { type: "system", orgId },
    input: { name: "bench", scopes: ["endpoints:scale"] },
    db,
  });

  // --- the fleet: endpoints, each with one parked replica on a node --------------------------
  const endpointsPerRate = measuredRates.map((r) => r * (warmUpSeconds + seconds));
  const endpointCount = endpointsPerRate.reduce((a, b) => a + b, 0) + idleEndpoints;
  const parkedNodes = Math.ceil(endpointCount / GPUS_PER_NODE);
  const nodeCount = parkedNodes + Math.max(2, Math.ceil(parkedNodes / 10));
  say(`fleet: ${nodeCount} nodes, ${endpointCount} endpoints, one parked replica each`);
  const model = DEMO_ENDPOINTS.find((e) => e.gpuType === "A10G")!.deployment;
  const nodeIds = Array.from({ length: nodeCount }, () => randomUUID());
  await db.node.createMany({
    data: nodeIds.map((id, i) => ({
      id,
      orgId,
      name: `handover-${i}`,
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
      // Heartbeats are not what this measures: stamped past the run, every node stays alive.
      lastHeartbeatAt: new Date(Date.now() + 24 * 3_600_000),
      agentUrl: `${agentUrl}/hosts/handover-${i}`,
      agentCertSha256: agent.certSha256,
    })),
  });
  const endpoints: { slug: string; deploymentId: string }[] = [];
  for (let i = 0; i < endpointCount; i += 500) {
    const batch = Array.from({ length: Math.min(500, endpointCount - i) }, (_, k) => ({
      endpointId: randomUUID(),
      deploymentId: randomUUID(),
      replicaId: randomUUID(),
      slug: `handover-${i + k}`,
      nodeId: nodeIds[Math.floor((i + k) / GPUS_PER_NODE)]!,
      gpuIndex: (i + k) % GPUS_PER_NODE,
    }));
    await db.endpoint.createMany({
      data: batch.map((e) => ({
        id: e.endpointId,
        orgId,
        slug: e.slug,
        name: e.slug,
        gpuType: "A10G",
        minReplicas: 0,
        maxReplicas: 2,
        desiredReplicas: 0,
      })),
    });
    await db.deployment.createMany({
      data: batch.map((e) => ({
        id: e.deploymentId,
        orgId,
        endpointId: e.endpointId,
        version: 1,
        ...demoDeploymentColumns(model),
        status: "active" as const,
      })),
    });
    for (const e of batch)
      await db.endpoint.update({
        where: { id: e.endpointId },
        data: { activeDeploymentId: e.deploymentId },
      });
    await db.replica.createMany({
      data: batch.map((e) => ({
        id: e.replicaId,
        orgId,
        endpointId: e.endpointId,
        deploymentId: e.deploymentId,
        nodeId: e.nodeId,
        state: "warm" as const,
      })),
    });
    await db.gpuReservation.createMany({
      data: batch.map((e) => ({ nodeId: e.nodeId, gpuIndex: e.gpuIndex, replicaId: e.replicaId })),
    });
    endpoints.push(...batch.map((e) => ({ slug: e.slug, deploymentId: e.deploymentId })));
  }

  // Statistics as a database in service has them: autovacuum analyzes a table once a tenth
  // of it changed, a minute or so after. Without this the first minute plans against the
  // empty tables' estimates (one warm replica per org, not thousands) and picks the org's
  // index over the node's for each node's parked replicas: 50 ms a shortlist instead of 2.
  await db.$executeRawUnsafe("ANALYZE");

  // --- the schedulers, as deployed ---------------------------------------------------------
  for (let i = 0; i < schedulerCount; i++)
    schedulers.push(
      startProcess(
        `scheduler-${i}`,
        "apps/scheduler",
        [
          process.execPath,
          // THAW_BENCH_SCHEDULER_CPU_PROFILE=<dir>: each scheduler writes a V8 CPU profile there.
          ...(process.env.THAW_BENCH_SCHEDULER_CPU_PROFILE
            ? ["--cpu-prof", `--cpu-prof-dir=${process.env.THAW_BENCH_SCHEDULER_CPU_PROFILE}`]
            : []),
          "--import",
          "tsx",
          "src/main.ts",
        ],
        {
          ...server.sharedEnv,
          THAW_AGENT_CALL_KEY: server.agentCallKeys.privateKey,
          LOG_LEVEL: "error",
          THAW_WARM_POOL_GPU_BUDGET: String(endpointCount * 2),
          THAW_WARM_POOL_WINDOWS: "hybrid-histogram",
          THAW_WARM_POOL_KEEP_ALIVE_SECONDS: "3600",
        },
        logs,
      ),
    );
  const deadline = performance.now() + 120_000;
  while ((await db.serviceHeartbeat.count()) < schedulerCount) {
    if (performance.now() > deadline) throw new Error("the schedulers did not report in 120 s");
    await new Promise((r) => setTimeout(r, 250));
  }
  // The windows measure a running control plane, so they begin once the first sweep has
  // tended every endpoint's warm pool — each then has a shared miss-cost prediction — not
  // while a fleet created all at once is predicted for the first time (seconds of both cores
  // at 2,760 endpoints; reported beside the windows as `load.firstTendingSeconds`).
  const firstTendingStarted = performance.now();
  const firstTendingDeadline = firstTendingStarted + 600_000;
  for (;;) {
    const tended = await db.endpointWarmPool.count({
      where: { orgId, bestNonWarmFreshUntil: { not: null } },
    });
    if (tended >= endpointCount) break;
    if (performance.now() > firstTendingDeadline)
      throw new Error(`only ${tended} of ${endpointCount} endpoints were tended in 10 minutes`);
    await new Promise((r) => setTimeout(r, 500));
  }
  const firstTendingSeconds = round((performance.now() - firstTendingStarted) / 1000);
  say(
    `every endpoint's warm pool tended once, ${firstTendingSeconds} s after the schedulers reported in`,
  );
  const parked = await db.replica.count({ where: { orgId, state: "warm" } });
  if (parked < endpointCount)
    throw new Error(`only ${parked} of ${endpointCount} parked replicas survived the first sweep`);

  // --- the bare round trip: same stand-in, same TLS, same keep-alive, same rate --------------
  const bareAgent = new HttpsAgent({ keepAlive: true, rejectUnauthorized: false });
  const bareBody = JSON.stringify({ replicaId: randomUUID(), path: "warm", bare: "x".repeat(600) });
  const bareRoundTrip = () =>
    new Promise<number>((resolve, reject) => {
      const sent = performance.now();
      const request = httpsRequest(
        `${agentUrl}/hosts/bare/replicas`,
        {
          method: "POST",
          agent: bareAgent,
          headers: { "content-type": "application/json" },
        },
        (response) => {
          response.resume();
          response.on("end", () => resolve(performance.now() - sent));
        },
      );
      request.on("error", reject);
      request.end(bareBody);
    });

  /** `count` calls of `fire`, one every 1/rate s, each started on time whatever the others do. */
  const atRate = async <T>(rate: number, count: number, fire: (n: number) => Promise<T>) => {
    const started = performance.now();
    const calls: Promise<T>[] = [];
    for (let n = 0; n < count; n++) {
      const wait = n * (1000 / rate) - (performance.now() - started);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      calls.push(fire(n));
    }
    return Promise.all(calls);
  };

  const ms = (values: number[]) => {
    const [p50, p99] = quantiles(values, [0.5, 0.99]);
    return { p50: round(p50 ?? 0), p99: round(p99 ?? 0) };
  };
  const auth = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
  // Warm-up, not counted: pools opened, the scale route loaded (the built server loads a
  // route's module on its first request: seconds on this machine, which was the first timed
  // event's whole latency and so the 1/s round's p99) and optimised a little. An endpoint that
  // does not exist is a 404 after the same authentication, limits and lookup.
  for (let i = 0; i < 50; i++) {
    await bareRoundTrip();
    await fetch(`${server.baseUrl}/api/ping`);
    const warmUp = await fetch(`${server.baseUrl}/api/v1/endpoints/no-such-endpoint/replicas`, {
      method: "PUT",
      headers: auth,
      body: JSON.stringify({ replicas: 1 }),
    });
    await warmUp.text();
    if (warmUp.status !== 404)
      throw new Error(`the scale route's warm-up answered ${warmUp.status}, not 404`);
  }

  const results: Record<
    string,
    { p99OverBareMs: number; targetMet: boolean } & Record<string, unknown>
  > = {};
  let met = true;
  let offset = 0;
  for (const [r, rate] of measuredRates.entries()) {
    // In an order unrelated to where the parked replicas sit (four to a node, in endpoint
    // order): independent autoscalers do not scale a host's endpoints one after another.
    const ofRate = shuffled(endpoints.slice(offset, offset + endpointsPerRate[r]!), rate);
    offset += ofRate.length;
    // The rate's first warmUpSeconds are sent like the rest but not timed: a step from a slower
    // rate grows the pools, the heaps and the optimised code of every process, and those
    // seconds held the slowest events of the timed window when it began at the step. Their
    // figures are reported apart (warmUp), not dropped.
    const warmUp = ofRate.slice(0, rate * warmUpSeconds);
    const mine = ofRate.slice(warmUp.length);
    say(
      `${rate} scale events/s for ${warmUpSeconds} s not timed, then ${seconds} s (${ofRate.length} endpoints)`,
    );
    // A failed round trip (a reset under load) is counted, not timed.
    const bareTrips = await atRate(rate, mine.length, () =>
      bareRoundTrip().then(
        (ms) => ms,
        () => null,
      ),
    );
    const bare = bareTrips.filter((ms): ms is number => ms !== null);
    const sent = new Map<string, number>();
    const cpuGroups: Record<string, ProcessGroup> = {
      web: { pids: [server.process.pid!] },
      schedulers: { pids: schedulers.map((child) => child.pid!) },
      postgres: { command: "postgres" },
      redis: { command: "redis-server" },
    };
    let cpuBefore = readCpu(cpuGroups);
    const allAnswers = await atRate(rate, ofRate.length, async (n) => {
      const { slug, deploymentId } = ofRate[n]!;
      if (n === warmUp.length) cpuBefore = readCpu(cpuGroups);
      const at = performance.now();
      sent.set(deploymentId, at);
      try {
        const response = await fetch(`${server!.baseUrl}/api/v1/endpoints/${slug}/replicas`, {
          method: "PUT",
          headers: auth,
          body: JSON.stringify({ replicas: 1 }),
        });
        await response.text();
        return { status: String(response.status), ms: performance.now() - at };
      } catch (error) {
        // A connection the server dropped: counted as refused, under its error's code.
        const code = (error as { cause?: { code?: string } }).cause?.code ?? "fetch failed";
        return { status: code, ms: performance.now() - at };
      }
    });
    const answers = allAnswers.slice(warmUp.length);
    const refusedBy: Record<string, number> = {};
    for (const a of answers)
      if (a.status !== "200") refusedBy[a.status] = (refusedBy[a.status] ?? 0) + 1;
    const refused = answers.length - answers.filter((a) => a.status === "200").length;
    // Every start delivered, or a minute after the last event: what arrived.
    const until = performance.now() + 60_000;
    while (ofRate.some((e) => !received.has(e.deploymentId)) && performance.now() < until)
      await new Promise((res) => setTimeout(res, 50));
    const cpuWindow = cpuBetween(cpuBefore, readCpu(cpuGroups));
    const latencies: number[] = [];
    let handedOver = 0;
    let otherPaths = 0;
    const stageSamples = {
      reconcile: [] as number[],
      place: [] as number[],
      dispatch: [] as number[],
    };
    for (const { deploymentId } of mine) {
      const receipt = received.get(deploymentId);
      const at = sent.get(deploymentId);
      if (!receipt || at === undefined) continue;
      latencies.push(receipt.at - at);
      if (receipt.path === "warm") handedOver++;
      else otherPaths++;
    }
    // Where it went, from the rows' own timestamps (Postgres's clock, this host's): API write
    // → the new replica created by reconcile → its cold start placed → the agent's receipt.
    const coldStarts = await db.coldStart.findMany({
      where: { deploymentId: { in: mine.map((e) => e.deploymentId) } },
      select: {
        id: true,
        deploymentId: true,
        requestedAt: true,
        replica: { select: { createdAt: true } },
      },
    });
    for (const c of coldStarts) {
      const at = sent.get(c.deploymentId);
      const receipt = received.get(c.deploymentId);
      if (at === undefined || !receipt || receipt.coldStartId !== c.id) continue;
      const sentWall = performance.timeOrigin + at;
      stageSamples.reconcile.push(c.replica.createdAt.getTime() - sentWall);
      stageSamples.place.push(c.requestedAt.getTime() - c.replica.createdAt.getTime());
      stageSamples.dispatch.push(performance.timeOrigin + receipt.at - c.requestedAt.getTime());
    }
    const warmUpLatencies = warmUp.flatMap(({ deploymentId }) => {
      const receipt = received.get(deploymentId);
      const at = sent.get(deploymentId);
      return receipt && at !== undefined ? [receipt.at - at] : [];
    });
    const warmUpLatency = ms(warmUpLatencies);
    const latency = ms(latencies);
    const bareMs = ms(bare);
    const p99OverBareMs = round(latency.p99 - bareMs.p99);
    const delivered = latencies.length;
    const rateMet =
      delivered === mine.length &&
      // A warm-up event lost or refused fails the rate too: only its latency is not timed.
      warmUpLatencies.length === warmUp.length &&
      refused === 0 &&
      otherPaths === 0 &&
      p99OverBareMs <= TARGET_P99_OVER_BARE_MS;
    if (rates.includes(rate)) met &&= rateMet;
    const cpu = cpuOfWindow(cpuWindow, mine.length);
    results[String(rate)] = {
      scaleEvents: mine.length,
      refused,
      refusedBy,
      delivered,
      handedOver,
      otherPaths,
      latencyMs: latency,
      apiAnswerMs: ms(answers.map((a) => a.ms)),
      stagesMs: Object.fromEntries(Object.entries(stageSamples).map(([k, v]) => [k, ms(v)])),
      bareRoundTripMs: bareMs,
      bareRoundTripsFailed: bareTrips.length - bare.length,
      p99OverBareMs,
      targetMet: rateMet,
      cpu,
      warmUp: {
        seconds: warmUpSeconds,
        scaleEvents: warmUp.length,
        refused: allAnswers.slice(0, warmUp.length).filter((a) => a.status !== "200").length,
        delivered: warmUpLatencies.length,
        latencyMs: warmUpLatency,
      },
    };
    say(
      `  cores busy ${cpu.busyCores} of ${cpu.cores}; CPU ms per event: ${JSON.stringify(cpu.msPerEvent)}; ${PROJECT_CORES} cores at half load: ${cpu.projection.eventsPerSecondAtHalfLoad} events/s`,
    );
    say(
      `  ${delivered}/${mine.length} delivered (${handedOver} handovers, ${otherPaths} other paths, ${refused} refused ${JSON.stringify(refusedBy)}): p50 ${latency.p50} ms, p99 ${latency.p99} ms; bare round trip p50 ${bareMs.p50} ms, p99 ${bareMs.p99} ms; the ${warmUpSeconds} s before, not timed: p50 ${warmUpLatency.p50} ms, p99 ${warmUpLatency.p99} ms`,
    );
  }
  const output = {
    load: {
      secondsPerRate: seconds,
      warmUpSecondsPerRate: warmUpSeconds,
      rates: measuredRates,
      schedulerProcesses: schedulerCount,
      nodes: nodeCount,
      endpoints: endpointCount,
      firstTendingSeconds,
      host: "127.0.0.1",
    },
    rates: results,
    target: { p99OverBareMs: TARGET_P99_OVER_BARE_MS, met },
    projection: {
      cores: PROJECT_CORES,
      ofRate: projectedRate,
      sameLoadPerCoreRateHere: sameLoadRate,
      p99OverBareMs: results[String(sameLoadRate)]!.p99OverBareMs,
      met: results[String(sameLoadRate)]!.targetMet,
    },
  };
  // What the processes logged as errors (the last few hundred lines), tallied: a refused
  // request's cause is in the web process's log, not in its answer.
  const errors = new Map<string, number>();
  for (const line of logs.join("").split("\n"))
    for (const m of line.matchAll(/"(?:err|msg)":(?:\{"type":"[^"]*","message":)?"([^"]{1,160})/g))
      if (line.includes('"level":50') || line.includes('"level":40'))
        errors.set(m[1]!, (errors.get(m[1]!) ?? 0) + 1);
  for (const [message, count] of errors) say(`logged ${count}×: ${message}`);
  process.stdout.write(`${JSON.stringify(output, null, values.json ? 0 : 2)}\n`);
} catch (error) {
  say(`failed: ${error instanceof Error ? error.message : String(error)}`);
  if (logs.length) say(`last output:\n${logs.slice(-30).join("")}`);
  exitCode = 1;
} finally {
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
  await server?.stop();
  agent.close();
  // The jobs this run's web and schedulers left, under its prefix only.
  const prefix = server?.sharedEnv.THAW_QUEUE_PREFIX;
  if (prefix && process.env.REDIS_URL) await clearQueuePrefix(process.env.REDIS_URL, prefix);
}
process.exit(exitCode);

/**
 * Where one rate's CPU went: milliseconds per scale event of each process group (the
 * window holds the schedulers' periodic sweeps too, so an event is charged its share of
 * them: at low rates most of its figure), how many of the machine's cores were busy, and
 * the rate PROJECT_CORES cores of control plane (web, schedulers, Postgres, Redis) carry at
 * half load, where an event waits little behind others' work (M/M/c at 50%): an upper
 * bound, since round trips and lock waits do not shrink with cores. "loadGenerator" is this
 * process: the autoscaler's calls and the agent stand-in.
 */
function cpuOfWindow(window: ReturnType<typeof cpuBetween>, events: number) {
  const perEvent = (seconds: number) => round((seconds * 1000) / Math.max(1, events));
  const { web = 0, schedulers = 0, postgres = 0, redis = 0 } = window.seconds;
  const controlPlaneMs = perEvent(web + schedulers + postgres + redis);
  return {
    windowSeconds: round(window.windowSeconds),
    cores: window.cores,
    busyCores: Math.round(window.busyCores * 100) / 100,
    saturated: window.busyCores >= 0.9 * window.cores,
    msPerEvent: {
      web: perEvent(web),
      schedulers: perEvent(schedulers),
      postgres: perEvent(postgres),
      redis: perEvent(redis),
      controlPlane: controlPlaneMs,
      loadGenerator: perEvent(window.seconds[THIS_PROCESS] ?? 0),
    },
    projection: {
      cores: PROJECT_CORES,
      eventsPerSecondAtHalfLoad:
        controlPlaneMs > 0 ? Math.round((0.5 * PROJECT_CORES * 1000) / controlPlaneMs) : 0,
    },
  };
}

/** A seeded Fisher–Yates shuffle (mulberry32), so that runs compare. */
function shuffled<T>(items: T[], seed: number): T[] {
  const out = [...items];
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function round(x: number) {
  return Math.round(x * 10) / 10;
}
