// pnpm --silent bench:ingest [--agents 1000] [--starts 2] [--rounds 3] [--json]
//
// Telemetry ingest under a fleet's load: phase events through the real agent API route
// (POST /api/agent/v1/telemetry on the built dashboard, `next start`) into PostgreSQL, beside a
// bare `INSERT … SELECT FROM UNNEST` of the same rows into the same table in the same run.
//
// --agents nodes join (joinNode, each with its own credential). Every round each agent reports
// --starts cold starts placed on it, one after another, as the agent's telemetry pipeline
// does (one batch in flight per agent): a pull start's eight phases in two batches — the
// first four while it is loading, the last four with the ready marker and the succeeded
// outcome — so half the batches close a start (replica → ready, a history job, a live
// notice). All agents at once: up to --agents batches in flight.
//
// The baseline then deletes those rows and inserts the very same rows, batch for batch, one
// UNNEST statement each, over a pool as large as the web process's (10): what the database
// takes with nothing in front of it. Rounds alternate the two (noisy machine: each figure is
// the median of its rounds). One JSON document on stdout, progress on stderr.
import type { ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { createJoinToken, joinNode } from "@thaw/core";
import {
  cpuBetween,
  G5_XLARGE_JOIN_FIGURES,
  readCpu,
  TEST_AGENT_NETWORK,
  THIS_PROCESS,
  type ProcessGroup,
} from "@thaw/core/testing";
import { createDbClient, directSql, Prisma } from "@thaw/db";
import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase } from "@thaw/db/testing";
import { ControlPlaneClient, generateAgentCallKeyPair } from "@thaw/node-agent-client";
import type { TelemetryBatchInput } from "@thaw/protocol";
import { freePort, startProcess, waitFor } from "../src/stack.ts";
import { clearQueuePrefix, ensureDashboardBuilt, median } from "./bench-kit.ts";

/** The bar: the route keeps at least half the bare insert's rate. */
const TARGET_RATIO = 0.5;
/** The web process's pool (apps/web/src/server/db.ts): the baseline gets the same budget. */
const WEB_POOL_CONNECTIONS = 10;
const PULL_PHASES = [
  "pull",
  "create",
  "start",
  "load_weights",
  "compile",
  "graph_capture",
  "warmup",
  "ready",
] as const;

const { values } = parseArgs({
  options: {
    agents: { type: "string", default: "1000" },
    starts: { type: "string", default: "2" },
    rounds: { type: "string", default: "3" },
    json: { type: "boolean", default: false },
  },
});
const agents = Number(values.agents);
const startsPerAgent = Number(values.starts);
const rounds = Number(values.rounds);
if (
  !(Number.isInteger(agents) && agents >= 1 && agents <= 5000) ||
  !(Number.isInteger(startsPerAgent) && startsPerAgent >= 1 && startsPerAgent <= 50) ||
  !(Number.isInteger(rounds) && rounds >= 1 && rounds <= 10)
) {
  console.error("usage: bench:ingest [--agents 1..5000] [--starts 1..50] [--rounds 1..10]");
  process.exit(2);
}
const redisUrl = process.env.REDIS_URL;
if (!redisUrl) {
  console.error("REDIS_URL is not set: run 'bash infra/dev/services.sh' first.");
  process.exit(2);
}

const say = (message: string) => process.stderr.write(`[bench:ingest] ${message}\n`);

ensureDashboardBuilt(say);

/**
 * CPU used over `work` by the web process, this load generator, and Postgres (its backends,
 * which come and go with the pools) with Redis.
 */
async function cpuOver<T>(webPid: number, work: () => Promise<T>) {
  const groups: Record<string, ProcessGroup> = {
    web: { pids: [webPid] },
    postgres: { command: "postgres" },
    redis: { command: "redis-server" },
  };
  const before = readCpu(groups);
  const result = await work();
  const { seconds } = cpuBetween(before, readCpu(groups));
  return {
    result,
    cpuSeconds: {
      web: seconds.web ?? 0,
      postgresAndRedis: (seconds.postgres ?? 0) + (seconds.redis ?? 0),
      loadGenerator: seconds[THIS_PROCESS] ?? 0,
    },
  };
}

interface Agent {
  nodeId: string;
  credential: string;
}
/** One batch as the agent sends it, and the rows it stands for. */
interface Batch {
  agent: Agent;
  body: TelemetryBatchInput;
}

const database = await createTestDatabase();
const prefix = `bench-${randomBytes(4).toString("hex")}`;
const logs: string[] = [];
let web: ChildProcess | undefined;
// The baseline's own pool, the size of the web process's.
const bare = createDbClient({ url: database.url, maxConnections: WEB_POOL_CONNECTIONS });
// Connected through Prisma once, so that $disconnect ends the pool the baseline uses.
await bare.$connect();
try {
  const { orgId, userId } = await seedDemo(database.db);
  const endpoint = await database.db.endpoint.findFirstOrThrow({
    where: { orgId, activeDeploymentId: { not: null } },
  });
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const agentCallKeys = generateAgentCallKeyPair();
  web = startProcess(
    "web",
    "apps/web",
    [
      // THAW_BENCH_WEB_CPU_PROFILE=<dir>: the web process writes a V8 CPU profile there on exit.
      ...(process.env.THAW_BENCH_WEB_CPU_PROFILE
        ? ["node", "--cpu-prof", `--cpu-prof-dir=${process.env.THAW_BENCH_WEB_CPU_PROFILE}`]
        : []),
      process.env.THAW_BENCH_WEB_CPU_PROFILE
        ? "node_modules/next/dist/bin/next"
        : "node_modules/.bin/next",
      "start",
      "--port",
      String(port),
      "--hostname",
      "127.0.0.1",
    ],
    {
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl,
      THAW_QUEUE_PREFIX: prefix,
      NEXT_TELEMETRY_DISABLED: "1",
      LOG_LEVEL: "warn",
      BETTER_AUTH_SECRET: randomBytes(32).toString("base64url"),
      BETTER_AUTH_URL: baseUrl,
      THAW_AGENT_CALL_PUBLIC_KEY: agentCallKeys.publicKey,
    },
    logs,
  );
  await waitFor(
    "the dashboard answering",
    async () => (await fetch(`${baseUrl}/api/ping`)).ok,
    60_000,
    logs,
  );

  say(`joining ${agents} agents`);
  const owner = { type: "user" as const, userId, orgId, role: "owner" as const };
  const fleet: Agent[] = [];
  for (let i = 0; i < agents; i++) {
    const { token } = await createJoinToken({
      actor: owner,
      input: { ttlSeconds: 600 },
      db: database.db,
    });
    const joined = await joinNode({
      input: {
        joinToken: token,
        name: `bench-ingest-${i}`,
        provider: "sim",
        runtime: "sim",
        agentVersion: "bench",
        figures: G5_XLARGE_JOIN_FIGURES,
      },
      db: database.db,
      network: TEST_AGENT_NETWORK,
      agentCallPublicKey: agentCallKeys.publicKey,
    });
    fleet.push({ nodeId: joined.nodeId, credential: joined.credential });
  }

  /** A round's cold starts, placed and dispatched, and the batches their agents will send. */
  const placeRound = async (): Promise<{ coldStartIds: string[]; batches: Batch[][] }> => {
    const replicas: Prisma.ReplicaCreateManyInput[] = [];
    const coldStarts: Prisma.ColdStartCreateManyInput[] = [];
    const perAgent: Batch[][] = [];
    const t0 = Date.now();
    const at = (s: number) => new Date(t0 + s * 1000).toISOString();
    for (const agent of fleet) {
      const mine: Batch[] = [];
      for (let s = 0; s < startsPerAgent; s++) {
        const replicaId = randomUUID();
        const coldStartId = randomUUID();
        replicas.push({
          id: replicaId,
          orgId,
          endpointId: endpoint.id,
          deploymentId: endpoint.activeDeploymentId!,
          nodeId: agent.nodeId,
          state: "starting",
        });
        coldStarts.push({
          id: coldStartId,
          orgId,
          endpointId: endpoint.id,
          deploymentId: endpoint.activeDeploymentId!,
          replicaId,
          nodeId: agent.nodeId,
          path: "pull",
          locality: "cold",
          predictedSeconds: 40,
          status: "dispatched",
        });
        type Event = NonNullable<TelemetryBatchInput["events"]>[number];
        const events = PULL_PHASES.map((phase, i): Event => ({
          coldStartId,
          sequence: i + 1,
          phase,
          startedAt: at(i * 5),
          ...(phase === "ready" ? {} : { endedAt: at(i * 5 + 5) }),
          ...(phase === "pull" || phase === "load_weights" ? { bytes: 4_000_000_000 } : {}),
          attributes: phase === "pull" ? { layers: 12, source: "registry" } : {},
        }));
        mine.push({ agent, body: { events: events.slice(0, 4) } });
        mine.push({
          agent,
          body: {
            events: events.slice(4),
            outcomes: [{ coldStartId, status: "succeeded", endedAt: at(35) }],
          },
        });
      }
      perAgent.push(mine);
    }
    await database.db.replica.createMany({ data: replicas });
    await database.db.coldStart.createMany({ data: coldStarts });
    return { coldStartIds: coldStarts.map((c) => c.id!), batches: perAgent };
  };

  // The agent's own client (what a node runs), so the request is exactly an agent's.
  const client = new ControlPlaneClient({ baseUrl, timeoutMs: 60_000 });
  const send = async (batch: Batch): Promise<number> =>
    (await client.sendTelemetry(batch.agent.credential, batch.body)).accepted;

  /** Every agent sends its batches in order, one in flight each; all agents at once. */
  const throughRoute = async (batches: Batch[][]) => {
    const latencies: number[] = [];
    let accepted = 0;
    const started = performance.now();
    await Promise.all(
      batches.map(async (mine) => {
        for (const batch of mine) {
          const sent = performance.now();
          const stored = await send(batch);
          accepted += stored;
          latencies.push(performance.now() - sent);
        }
      }),
    );
    return { seconds: (performance.now() - started) / 1000, accepted, latencies };
  };

  /** The framework's floor: the same agents, as many requests each, to GET /api/ping. */
  const throughBareRoute = async (batches: Batch[][]) => {
    const started = performance.now();
    await Promise.all(
      batches.map(async (mine) => {
        for (let i = 0; i < mine.length; i++) {
          const response = await fetch(`${baseUrl}/api/ping`);
          await response.text();
          if (!response.ok) throw new Error(`/api/ping answered ${response.status}`);
        }
      }),
    );
    return { seconds: (performance.now() - started) / 1000 };
  };

  const sql = directSql(bare);
  // The figures ingest derives (measurePhase), so the baseline writes the same columns.
  type Event = NonNullable<TelemetryBatchInput["events"]>[number];
  const secondsOf = (e: Event) =>
    e.endedAt === undefined ? null : (Date.parse(e.endedAt) - Date.parse(e.startedAt)) / 1000;
  /** The same rows, batch for batch, one INSERT … SELECT FROM UNNEST each, on a pool of 10. */
  const throughUnnest = async (batches: Batch[][]) => {
    const all = batches.flat();
    const started = performance.now();
    let inserted = 0;
    await Promise.all(
      all.map(async ({ body }) => {
        const events = body.events ?? [];
        const stored = await sql.execute(Prisma.sql`
          INSERT INTO "PhaseEvent"
            ("id", "coldStartId", "sequence", "phase", "startedAt", "endedAt", "seconds", "bytes",
             "throughputBps", "attributes")
          SELECT gen_random_uuid(), e.cold_start_id, e.sequence, e.phase, e.started_at, e.ended_at,
                 e.seconds, e.bytes, e.throughput_bps, e.attributes
          FROM UNNEST(
            ${events.map((e) => e.coldStartId)}::uuid[],
            ${events.map((e) => e.sequence)}::int[],
            ${events.map((e) => e.phase)}::"Phase"[],
            ${events.map((e) => e.startedAt.replace("T", " ").replace("Z", ""))}::timestamp(3)[],
            ${events.map((e) => e.endedAt?.replace("T", " ").replace("Z", "") ?? null)}::timestamp(3)[],
            ${events.map(secondsOf)}::float8[],
            ${events.map((e) => (e.bytes === undefined ? null : String(e.bytes)))}::bigint[],
            ${events.map((e) => {
              const seconds = secondsOf(e);
              return e.bytes === undefined || !seconds ? null : e.bytes / seconds;
            })}::float8[],
            ${events.map((e) => JSON.stringify(e.attributes ?? {}))}::jsonb[]
          ) AS e(cold_start_id, sequence, phase, started_at, ended_at, seconds, bytes,
                 throughput_bps, attributes)`);
        inserted += stored;
      }),
    );
    return { seconds: (performance.now() - started) / 1000, inserted };
  };

  const percentile = (xs: number[], q: number) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
  };

  // Warm-up, not counted: the first calls open pools, and V8 optimises the route's code only
  // after some thousands of calls (a round with 50 agents left the first counted round ~25%
  // slower than the next ones).
  {
    const { batches } = await placeRound();
    await throughRoute(batches);
    await throughBareRoute(batches);
  }

  type Cpu = Awaited<ReturnType<typeof cpuOver>>["cpuSeconds"];
  const perThousandRows = (cpu: Cpu, rows: number, seconds: number) => ({
    msPerThousandRows: {
      web: (cpu.web / rows) * 1e6,
      postgresAndRedis: (cpu.postgresAndRedis / rows) * 1e6,
      loadGenerator: (cpu.loadGenerator / rows) * 1e6,
    },
    coresBusy: {
      web: cpu.web / seconds,
      postgresAndRedis: cpu.postgresAndRedis / seconds,
      loadGenerator: cpu.loadGenerator / seconds,
    },
  });
  const samples: {
    bareRequestsPerSecond: number;
    bareWebMsPerRequest: number;
    routeWebMsPerBatch: number;
    routeRowsPerSecond: number;
    unnestRowsPerSecond: number;
    batchP50Ms: number;
    batchP99Ms: number;
    routeCpu: ReturnType<typeof perThousandRows>;
    unnestCpu: ReturnType<typeof perThousandRows>;
  }[] = [];
  for (let round = 1; round <= rounds; round++) {
    const { coldStartIds, batches } = await placeRound();
    const rows = batches.flat().reduce((n, b) => n + (b.body.events?.length ?? 0), 0);
    const { result: route, cpuSeconds: routeCpu } = await cpuOver(web.pid!, () =>
      throughRoute(batches),
    );
    if (route.accepted !== rows)
      throw new Error(`the route stored ${route.accepted} of ${rows} rows`);
    const closed = await database.db.coldStart.count({
      where: { id: { in: coldStartIds }, status: "succeeded" },
    });
    if (closed !== coldStartIds.length)
      throw new Error(`${coldStartIds.length - closed} cold starts were not closed by ingest`);
    await sql.execute(
      Prisma.sql`DELETE FROM "PhaseEvent" WHERE "coldStartId" = ANY(${coldStartIds}::uuid[])`,
    );
    const { result: unnest, cpuSeconds: unnestCpu } = await cpuOver(web.pid!, () =>
      throughUnnest(batches),
    );
    if (unnest.inserted !== rows)
      throw new Error(`the bare insert stored ${unnest.inserted} of ${rows} rows`);
    const batchCount = batches.flat().length;
    const { result: bareRoute, cpuSeconds: bareCpu } = await cpuOver(web.pid!, () =>
      throughBareRoute(batches),
    );
    const sample = {
      bareRequestsPerSecond: batchCount / bareRoute.seconds,
      bareWebMsPerRequest: (bareCpu.web / batchCount) * 1000,
      routeWebMsPerBatch: (routeCpu.web / batchCount) * 1000,
      routeRowsPerSecond: rows / route.seconds,
      unnestRowsPerSecond: rows / unnest.seconds,
      batchP50Ms: percentile(route.latencies, 0.5),
      batchP99Ms: percentile(route.latencies, 0.99),
      // Where each run's CPU went, per 1,000 rows and as a share of one core over its wall time.
      routeCpu: perThousandRows(routeCpu, rows, route.seconds),
      unnestCpu: perThousandRows(unnestCpu, rows, unnest.seconds),
    };
    samples.push(sample);
    say(
      `round ${round}: ${rows} rows in ${batches.flat().length} batches — route ${sample.routeRowsPerSecond.toFixed(0)} rows/s (batch p50 ${sample.batchP50Ms.toFixed(0)} ms, p99 ${sample.batchP99Ms.toFixed(0)} ms; cores busy: web ${sample.routeCpu.coresBusy.web.toFixed(2)}, postgres+redis ${sample.routeCpu.coresBusy.postgresAndRedis.toFixed(2)}, load ${sample.routeCpu.coresBusy.loadGenerator.toFixed(2)}), UNNEST ${sample.unnestRowsPerSecond.toFixed(0)} rows/s; web CPU ${sample.routeWebMsPerBatch.toFixed(2)} ms a batch vs ${sample.bareWebMsPerRequest.toFixed(2)} ms a bare GET /api/ping (${sample.bareRequestsPerSecond.toFixed(0)} req/s)`,
    );
  }

  const routeRowsPerSecond = median(samples.map((s) => s.routeRowsPerSecond));
  const unnestRowsPerSecond = median(samples.map((s) => s.unnestRowsPerSecond));
  const ratio = median(samples.map((s) => s.routeRowsPerSecond / s.unnestRowsPerSecond));
  const medianCpu = (pick: (s: (typeof samples)[number]) => ReturnType<typeof perThousandRows>) => {
    const of = (f: (c: ReturnType<typeof perThousandRows>) => number) =>
      median(samples.map((s) => f(pick(s))));
    return {
      msPerThousandRows: {
        web: of((c) => c.msPerThousandRows.web),
        postgresAndRedis: of((c) => c.msPerThousandRows.postgresAndRedis),
        loadGenerator: of((c) => c.msPerThousandRows.loadGenerator),
      },
      coresBusy: {
        web: of((c) => c.coresBusy.web),
        postgresAndRedis: of((c) => c.coresBusy.postgresAndRedis),
        loadGenerator: of((c) => c.coresBusy.loadGenerator),
      },
    };
  };
  const routeCpu = medianCpu((s) => s.routeCpu);
  const unnestCpu = medianCpu((s) => s.unnestCpu);
  const output = {
    load: {
      agents,
      startsPerAgentPerRound: startsPerAgent,
      rowsPerRound: agents * startsPerAgent * PULL_PHASES.length,
      batchesPerRound: agents * startsPerAgent * 2,
      rounds,
      baselinePoolConnections: WEB_POOL_CONNECTIONS,
    },
    route: {
      rowsPerSecond: routeRowsPerSecond,
      batchLatencyMs: {
        p50: median(samples.map((s) => s.batchP50Ms)),
        p99: median(samples.map((s) => s.batchP99Ms)),
      },
      cpu: routeCpu,
      webCpuMsPerBatch: median(samples.map((s) => s.routeWebMsPerBatch)),
    },
    // The framework's floor beside it: the same agents and request count, GET /api/ping.
    bareRoute: {
      requestsPerSecond: median(samples.map((s) => s.bareRequestsPerSecond)),
      webCpuMsPerRequest: median(samples.map((s) => s.bareWebMsPerRequest)),
    },
    unnest: { rowsPerSecond: unnestRowsPerSecond, cpu: unnestCpu },
    routeOverUnnest: ratio,
    target: { routeOverUnnest: TARGET_RATIO, met: ratio >= TARGET_RATIO },
    // Where the target stands when this run's CPU costs per row are spread over more cores:
    // - postgresBound: the web tier scaled out (stateless replicas), so that Postgres is the
    //   saturated resource: the route's rate over the bare insert's is the inverse ratio of
    //   their Postgres CPU per row (the route's also counts Redis's, for its history jobs);
    // - oneMachine: web, Postgres and the inserting client on the same saturated cores:
    //   the inverse ratio of all their CPU per row.
    projection: {
      postgresBound:
        unnestCpu.msPerThousandRows.postgresAndRedis / routeCpu.msPerThousandRows.postgresAndRedis,
      oneMachine:
        (unnestCpu.msPerThousandRows.postgresAndRedis + unnestCpu.msPerThousandRows.loadGenerator) /
        (routeCpu.msPerThousandRows.web + routeCpu.msPerThousandRows.postgresAndRedis),
    },
  };
  process.stdout.write(`${JSON.stringify(output, null, values.json ? 0 : 2)}\n`);
} catch (error) {
  say(`failed: ${error instanceof Error ? error.message : String(error)}`);
  if (logs.length) say(`web's last output:\n${logs.slice(-20).join("\n")}`);
  process.exitCode = 1;
} finally {
  web?.kill("SIGTERM");
  if (web && web.exitCode === null) await new Promise((r) => web!.once("exit", r));
  await bare.$disconnect();
  await database.drop();
  // The history jobs ingest enqueued, under this run's prefix only.
  await clearQueuePrefix(redisUrl, prefix);
}
