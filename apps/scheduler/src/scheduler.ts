import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import {
  findUnhandledClosedStarts,
  SWEEP_SLICES_PER_TICK,
  IDEMPOTENCY_KEY_RETENTION_HOURS,
  pruneExpiredRecords,
  findSnapshotWork,
  listFleetOrgs,
  markLostNodes,
  parseSealingKey,
  RECONCILE_SWEEP_MS,
  evaluateOpenAlertEpisodes,
  findStalledWebhookDeliveries,
} from "@thaw/core";
import { createDbClient, openPooledConnections } from "@thaw/db";
import { OtlpTraceExport, parseOtlpHeaders } from "@thaw/core/traces";
import {
  BEST_NON_WARM_TTL_MS,
  BestNonWarmMemo,
  OrgIdleTimesMemo,
  TimedReads,
  type WarmPoolOptions,
} from "@thaw/core/warm-pool";
import schedulerPackage from "../package.json" with { type: "json" };
import type { SchedulerEnv } from "./env.ts";
import { loadFleetSetup } from "./fleet/fleet-config.ts";
import { OfferingAvailability } from "./fleet/offering-availability.ts";
import type { Logger } from "./logger.ts";
import { startMetricsServer, type RunningMetricsServer } from "./metrics/metrics-server.ts";
import { SchedulerMetrics } from "./metrics/scheduler-metrics.ts";
import { ColdStartTraces } from "./tracing/cold-start-traces.ts";
import { createQueues, enqueue } from "./queues.ts";
import { assertNoEviction, createProducerConnection, createWorkerConnection } from "./redis.ts";
import { reportHealth } from "./tasks/report-health.ts";
import { takeSweepSlice } from "./tasks/take-sweep-slice.ts";
import { startWorkers } from "./workers/index.ts";
import { createWorkerContext } from "./workers/worker-context.ts";

/** The version the scheduler reports (heartbeat, health card): its package's, as the agent's is. */
export const SCHEDULER_VERSION: string = schedulerPackage.version;

function warmPoolOptions(env: SchedulerEnv): WarmPoolOptions {
  return {
    gpuBudget: env.THAW_WARM_POOL_GPU_BUDGET,
    // One read of each org's idle times a minute, not one per endpoint tended.
    orgIdleTimes: new OrgIdleTimesMemo(),
    // The GPUs each org's warm pools hold, counted once a sweep for the tendings that change
    // nothing (a count per tending made a sweep quadratic in the org's endpoints).
    orgPooledGpus: new TimedReads<number>(RECONCILE_SWEEP_MS),
    // Each endpoint's miss cost predicted every 2.5–5 minutes, not at every tending.
    bestNonWarm: new BestNonWarmMemo(
      BEST_NON_WARM_TTL_MS,
      Date.now,
      undefined,
      () => 0.5 + 0.5 * Math.random(),
    ),
    settings: {
      windows: env.THAW_WARM_POOL_WINDOWS,
      ...(env.THAW_WARM_POOL_KEEP_ALIVE_SECONDS
        ? { fixedKeepAliveSeconds: env.THAW_WARM_POOL_KEEP_ALIVE_SECONDS }
        : {}),
      ...(env.THAW_WARM_POOL_FULL_VALUE_MISS_SECONDS
        ? { fullValueMissSeconds: env.THAW_WARM_POOL_FULL_VALUE_MISS_SECONDS }
        : {}),
    },
  };
}
const TICK_MS = 5_000;
/** Retention runs this often: records expire by the day, a backlog is worked off in runs. */
const RETENTION_MS = 10 * 60_000;
/**
 * Enough for the workers' concurrency not to queue for a connection: each place job holds one
 * for its transaction (16), the rest share few (dispatch's reads and writes are coalesced).
 */
const DB_POOL_SIZE = 32;
/**
 * Of those, kept open from the start (openPooledConnections): what a burst of scale events
 * uses at once (bench:warm-handover at 25 events/s), so its first seconds do not open them.
 */
const DB_POOL_KEPT = 8;

export interface RunningScheduler {
  instanceId: string;
  /** Where Prometheus scrapes this process (only with THAW_METRICS_TOKEN set). */
  metricsUrl: string | null;
  /** Stops timers, lets the current tick finish, closes connections. */
  stop(): Promise<void>;
}

/**
 * Starts one scheduler instance. Several may run at once: every periodic task is an
 * idempotent, conditional write, so two instances doing it together change nothing more.
 */
export async function startScheduler(
  env: SchedulerEnv,
  log: Logger,
  options: { sweepMs?: number } = {},
): Promise<RunningScheduler> {
  const instanceId =
    env.THAW_SCHEDULER_ID ?? `scheduler-${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const startedAt = new Date();
  // A bad fleet config stops the start here, before any connection is opened.
  const fleetSetup = env.THAW_FLEET_CONFIG ? loadFleetSetup(env.THAW_FLEET_CONFIG, env) : undefined;
  const db = createDbClient({
    url: env.DATABASE_URL,
    maxConnections: DB_POOL_SIZE,
    minConnections: DB_POOL_KEPT,
  });
  const redis = createProducerConnection(env.REDIS_URL);
  redis.on("error", (error) => log.warn({ err: error.message }, "redis connection error"));
  try {
    await redis.connect().catch((error: Error) => {
      throw new Error(`cannot reach Redis at REDIS_URL: ${error.message}`);
    });
    await assertNoEviction(redis);
    await db.$queryRaw`SELECT 1`.catch((error: Error) => {
      throw new Error(`cannot reach PostgreSQL at DATABASE_URL: ${error.message}`);
    });
    await openPooledConnections(db);
  } catch (error) {
    redis.disconnect();
    await db.$disconnect();
    throw error;
  }
  const queues = createQueues(redis, env.THAW_QUEUE_PREFIX);
  const workerConnection = createWorkerConnection(env.REDIS_URL);
  workerConnection.on("error", (error) =>
    log.warn({ err: error.message }, "redis worker connection error"),
  );
  const fleet = fleetSetup
    ? { ...fleetSetup, availability: new OfferingAvailability(redis, env.THAW_QUEUE_PREFIX) }
    : undefined;
  const ctx = createWorkerContext({
    db,
    queues,
    log,
    agentCallKey: env.THAW_AGENT_CALL_KEY,
    agentCidrs: env.THAW_AGENT_CIDRS,
    ...(fleet ? { fleet } : {}),
    warmPool: warmPoolOptions(env),
    ...(env.THAW_SNAPSHOT_REGISTRY ? { snapshotStore: env.THAW_SNAPSHOT_REGISTRY } : {}),
    ...registryCredentialAccess(env),
    webhooks: {
      sealingKey: parseSealingKey(env.THAW_CREDENTIALS_KEY),
      trustedHosts: new Set(env.THAW_WEBHOOK_TRUSTED_HOSTS),
    },
  });
  const metrics = env.THAW_METRICS_TOKEN
    ? new SchedulerMetrics(
        { db, queues },
        { maxEndpoints: env.THAW_METRICS_MAX_ENDPOINTS },
      ).withProcessMetrics()
    : undefined;
  const traces = env.OTEL_EXPORTER_OTLP_ENDPOINT
    ? new ColdStartTraces(
        db,
        new OtlpTraceExport({
          endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT,
          headers: parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS),
          serviceName: env.OTEL_SERVICE_NAME,
          serviceVersion: SCHEDULER_VERSION,
        }),
        log,
      )
    : undefined;
  const workers = startWorkers({
    ctx,
    connection: workerConnection,
    prefix: env.THAW_QUEUE_PREFIX,
    log,
    ...(metrics ? { metrics } : {}),
    ...(traces ? { traces } : {}),
  });
  let metricsServer: RunningMetricsServer | null = null;
  if (metrics && env.THAW_METRICS_TOKEN)
    metricsServer = await startMetricsServer({
      metrics,
      token: env.THAW_METRICS_TOKEN,
      host: env.THAW_METRICS_HOST,
      port: env.THAW_METRICS_PORT,
      log,
    }).catch(async (error: Error) => {
      await Promise.all(workers.map((w) => w.close()));
      throw new Error(
        `cannot serve metrics on ${env.THAW_METRICS_HOST}:${env.THAW_METRICS_PORT} (THAW_METRICS_PORT): ${error.message}`,
      );
    });

  // The sweep: every endpoint reconciled and every closed start handled from Postgres, so
  // whatever Redis lost (a wipe, a crash between commit and enqueue) is repaired. The
  // endpoints are walked round in slices spread over the period (takeSweepSlice), the rest
  // read once a period.
  const sweepMs = options.sweepMs ?? RECONCILE_SWEEP_MS;
  let walking: Promise<unknown> | null = null;
  const runWalk = () => {
    // One slice at a time: a slow one is not overtaken by the next tick's.
    walking ??= takeSweepSlice({
      db,
      redis,
      queues,
      prefix: env.THAW_QUEUE_PREFIX,
      instanceId,
      sweepMs,
    })
      .catch((error: unknown) =>
        log.error(
          { err: error instanceof Error ? error.message : String(error) },
          "sweep slice failed",
        ),
      )
      .finally(() => {
        walking = null;
      });
  };
  runWalk();
  const walkTimer = setInterval(runWalk, sweepMs / SWEEP_SLICES_PER_TICK);

  let sweeping: Promise<void> = Promise.resolve();
  const sweep = async () => {
    for (const coldStartId of await findUnhandledClosedStarts({ db }))
      await enqueue(queues, "history", { coldStartId });
    // One query: deployments a snapshot might pay off for, and captures whose job was lost.
    for (const deploymentId of await findSnapshotWork({ db }))
      await enqueue(queues, "snapshot", { deploymentId });
    // The webhook outbox's relay: pending deliveries whose job Redis lost or never got.
    for (const deliveryId of await findStalledWebhookDeliveries({ db }))
      await enqueue(queues, "webhookDelivery", { deliveryId });
    // SLO alerts resolve as their windows cool, whether or not the endpoint starts again.
    for (const deliveryId of await evaluateOpenAlertEpisodes({ db }))
      await enqueue(queues, "webhookDelivery", { deliveryId });
    if (fleet) {
      for (const orgId of await listFleetOrgs({ db, provider: fleet.provider.kind }))
        await enqueue(queues, "fleet", { orgId, reason: "sweep" });
      await enqueue(queues, "fleet", { reason: "gc" });
    }
  };
  const runSweep = () => {
    sweeping = sweep().catch((error: unknown) =>
      log.error({ err: error instanceof Error ? error.message : String(error) }, "sweep failed"),
    );
  };
  runSweep();
  const sweepTimer = setInterval(runSweep, sweepMs);

  let inFlight: Promise<void> = Promise.resolve();
  const tick = async () => {
    await reportHealth({ db, redis, queues, instanceId, startedAt, version: SCHEDULER_VERSION });
    const lost = await markLostNodes({ db });
    if (lost > 0) log.warn({ lost }, "nodes stopped heartbeating and were marked lost");
  };
  const runTick = () => {
    inFlight = tick().catch((error: unknown) =>
      log.error(
        { err: error instanceof Error ? error.message : String(error) },
        "periodic tick failed",
      ),
    );
  };
  runTick();
  const timer = setInterval(runTick, TICK_MS);

  // Retention: records that only grow (scale events, long-stopped replicas, Idempotency-Keys)
  // pruned in small batches; several schedulers doing it at once skip each other's rows.
  let pruning: Promise<void> = Promise.resolve();
  const runPrune = () => {
    pruning = pruneExpiredRecords({
      db,
      policy: {
        retentionDays: env.THAW_RETENTION_DAYS,
        idempotencyKeyHours: IDEMPOTENCY_KEY_RETENTION_HOURS,
      },
    })
      .then((pruned) => {
        if (Object.values(pruned).some((n) => n > 0)) log.info(pruned, "pruned expired records");
      })
      .catch((error: unknown) =>
        log.error(
          { err: error instanceof Error ? error.message : String(error) },
          "retention failed",
        ),
      );
  };
  runPrune();
  const pruneTimer = setInterval(runPrune, RETENTION_MS);
  log.info(
    {
      instanceId,
      prefix: env.THAW_QUEUE_PREFIX,
      fleet: fleet
        ? { provider: fleet.provider.kind, offerings: fleet.policy.offerings.length }
        : "joined by hand",
    },
    "scheduler started",
  );

  return {
    instanceId,
    metricsUrl: metricsServer?.url ?? null,
    async stop() {
      await metricsServer?.close();
      clearInterval(timer);
      clearInterval(sweepTimer);
      clearInterval(walkTimer);
      clearInterval(pruneTimer);
      await inFlight;
      await sweeping;
      await walking;
      await pruning;
      // Graceful: each worker finishes its current jobs; anything unfinished is retried.
      await Promise.all(workers.map((w) => w.close()));
      // Then the traces those jobs closed are sent.
      await traces?.shutdown().catch(() => undefined);
      workerConnection.disconnect();
      await Promise.all(Object.values(queues).map((q) => q.close()));
      redis.disconnect();
      await db.serviceHeartbeat.deleteMany({ where: { id: instanceId } });
      await db.$disconnect();
      log.info({ instanceId }, "scheduler stopped");
    },
  };
}

/** Registry credentials are opened at dispatch only when the operator set the sealing key. */
function registryCredentialAccess(env: SchedulerEnv) {
  const sealingKey = parseSealingKey(env.THAW_CREDENTIALS_KEY);
  if (!sealingKey) return {};
  return {
    registryCredentials: {
      sealingKey,
      ...(env.THAW_ECR_ENDPOINT ? { ecrEndpoint: env.THAW_ECR_ENDPOINT } : {}),
    },
  };
}
