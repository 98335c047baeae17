import { QUEUES } from "@thaw/core";
import { parsePrometheusText, sumObserved, sumSamples } from "@thaw/core/testing";
import { useTestDatabase } from "@thaw/db/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueue } from "../queues.ts";
import { startScheduler, type RunningScheduler } from "../scheduler.ts";
import {
  type SchedulerTestStack,
  schedulerTestEnv,
  startSchedulerTestStack,
} from "../testing/scheduler-test-stack.ts";

// The scheduler's /metrics as Prometheus scrapes it: over HTTP with the operator's token,
// parsed by an independent text-format parser, and every figure checked against what
// Postgres recorded for the same starts (a real sim agent ran them).

const HOSTS = 2; // g5.xlarge: one A10G each
const TOKEN = "metrics-token-for-the-scheduler-test";
const silent = pino({ level: "silent" });

describe("scheduler /metrics", () => {
  const testDb = useTestDatabase();
  const prefix = `test-metrics-${Date.now()}`;
  let stack: SchedulerTestStack;
  let scheduler: RunningScheduler;
  let endpointId: string;
  const testStartedAt = Date.now();

  const db = () => testDb.current.db;
  const scaleTo = async (desired: number) => {
    await db().endpoint.update({ where: { id: endpointId }, data: { desiredReplicas: desired } });
    await enqueue(stack.queues, "reconcile", { endpointId });
  };
  const scrape = async (headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) =>
    fetch(scheduler.metricsUrl!, { headers });
  const families = async () => {
    const response = await scrape();
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    return parsePrometheusText(await response.text());
  };

  beforeAll(async () => {
    stack = await startSchedulerTestStack({
      db: db(),
      prefix,
      hosts: HOSTS,
      agentPrefix: "mx",
      agentEnv: { THAW_SIM_TIME_FACTOR: "2000" },
    });
    endpointId = stack.endpointId;
    const env = schedulerTestEnv({
      databaseUrl: testDb.current.url,
      prefix,
      extra: {
        THAW_METRICS_TOKEN: TOKEN,
        THAW_METRICS_HOST: "127.0.0.1",
        THAW_METRICS_PORT: "0",
        // A scaled-down replica is parked warm, so the warm-pool gauges have one to show.
        THAW_WARM_POOL_GPU_BUDGET: "2",
        THAW_WARM_POOL_WINDOWS: "hybrid-histogram",
        THAW_WARM_POOL_KEEP_ALIVE_SECONDS: "600",
        THAW_WARM_POOL_FULL_VALUE_MISS_SECONDS: "0.001",
      },
    });
    scheduler = await startScheduler(env, silent, { sweepMs: 1_000 });
  }, 120_000);

  afterAll(async () => {
    await scheduler?.stop();
    await stack?.close();
  });

  it("answers only the operator's token, and only at /metrics", async () => {
    expect((await scrape({})).status).toBe(401);
    expect((await scrape({ authorization: "Bearer not-the-token" })).status).toBe(401);
    const elsewhere = await fetch(scheduler.metricsUrl!.replace("/metrics", "/debug"), {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(elsewhere.status).toBe(404);
  });

  it("counts placements, closed starts and their phases exactly as Postgres recorded them", async () => {
    await scaleTo(2);
    await expect
      .poll(
        () =>
          db().coldStart.count({
            where: { endpointId, status: "succeeded", closedHandledAt: { not: null } },
          }),
        { timeout: 45_000 },
      )
      .toBe(2);
    // A history job commits closedHandledAt, then does the start's webhook and alert work; its
    // metrics are counted when the job completes. Wait for every handled start's to be.
    await expect
      .poll(
        async () =>
          sumSamples(await families(), "thaw_cold_starts_total", { endpoint: endpointId }) -
          (await db().coldStart.count({ where: { endpointId, closedHandledAt: { not: null } } })),
        { timeout: 15_000 },
      )
      .toBe(0);
    const starts = await db().coldStart.findMany({
      where: { endpointId },
      include: { phases: true },
    });
    const m = await families();

    // Every committed start is one decision, labelled by its path and what the node held.
    expect(sumSamples(m, "thaw_placement_decisions_total")).toBe(starts.length);
    for (const start of starts)
      expect(
        sumSamples(m, "thaw_placement_decisions_total", {
          path: start.path,
          locality: start.locality,
        }),
      ).toBeGreaterThanOrEqual(1);
    expect(sumSamples(m, "thaw_placements_total", { outcome: "placed" })).toBeGreaterThanOrEqual(1);

    const handled = starts.filter((s) => s.closedHandledAt !== null);
    for (const outcome of ["succeeded", "failed"] as const)
      expect(sumSamples(m, "thaw_cold_starts_total", { endpoint: endpointId, outcome })).toBe(
        handled.filter((s) => s.status === outcome).length,
      );
    const succeeded = handled.filter((s) => s.status === "succeeded");
    expect(sumSamples(m, "thaw_cold_start_duration_seconds")).toBe(succeeded.length);
    expect(sumSamples(m, "thaw_prediction_ratio")).toBe(succeeded.length);
    // The histogram's sum is the seconds Postgres holds.
    expect(sumObserved(m, "thaw_cold_start_duration_seconds")).toBeCloseTo(
      succeeded.reduce((sum, s) => sum + s.actualSeconds!, 0),
      6,
    );
    // One observation per measured phase, by path and phase.
    const measured = handled.flatMap((s) =>
      s.phases.filter((p) => p.seconds !== null).map((p) => `${s.path}/${p.phase}`),
    );
    expect(measured.length).toBeGreaterThan(0);
    for (const key of new Set(measured)) {
      const [path, phase] = key.split("/") as [string, string];
      expect(sumSamples(m, "thaw_cold_start_phase_duration_seconds", { path, phase })).toBe(
        measured.filter((k) => k === key).length,
      );
    }

    // Shared state: the two GPUs serve, none is free.
    expect(sumSamples(m, "thaw_fleet_gpus", { gpu_model: "A10G", state: "serving" })).toBe(2);
    expect(sumSamples(m, "thaw_fleet_gpus", { gpu_model: "A10G", state: "free" })).toBe(0);
    // Every queue and state is reported, and the jobs this process ran were timed.
    for (const queue of Object.values(QUEUES))
      for (const state of ["waiting", "active", "delayed", "failed"])
        expect(
          m
            .get("thaw_queue_jobs")!
            .samples.some((s) => s.labels.queue === queue.name && s.labels.state === state),
        ).toBe(true);
    // The scale-up's reconcile job placed both replicas itself (one batch, reconcile-processor.ts):
    // no place job need run, so the reconcile jobs are the ones certain to have been timed.
    expect(
      sumSamples(m, "thaw_queue_job_run_seconds", { queue: "reconcile", result: "completed" }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sumSamples(m, "thaw_queue_job_wait_seconds", { queue: "history" }),
    ).toBeGreaterThanOrEqual(2);
    // Process metrics come with it.
    expect(m.has("process_cpu_seconds_total")).toBe(true);
  });

  it("shows a parked replica in the warm pool's gauges, with its GPU as warm", async () => {
    await scaleTo(1);
    await expect
      .poll(() => db().replica.count({ where: { endpointId, state: "warm" } }), {
        timeout: 30_000,
      })
      .toBe(1);
    // Idle time accrues from when it last served (or was parked).
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const m = await families();
    expect(sumSamples(m, "thaw_warm_pool_replicas", { gpu_model: "A10G" })).toBe(1);
    expect(sumSamples(m, "thaw_warm_pool_gpus", { gpu_model: "A10G" })).toBe(1);
    expect(sumSamples(m, "thaw_fleet_gpus", { state: "warm" })).toBe(1);
    expect(sumSamples(m, "thaw_fleet_gpus", { state: "serving" })).toBe(1);
    expect(sumSamples(m, "thaw_warm_pool_idle_gpu_seconds")).toBeGreaterThanOrEqual(1.5);
    // The last hour's GPU time: both GPUs served, the parked one is now idle; never more
    // than the two GPUs could hold since the test began.
    const last = (category: string) => sumSamples(m, "thaw_gpu_seconds_last_hour", { category });
    expect(last("serving")).toBeGreaterThan(0);
    expect(last("warm_idle")).toBeGreaterThanOrEqual(1.5);
    expect(last("starting")).toBeGreaterThan(0);
    expect(sumSamples(m, "thaw_gpu_seconds_last_hour")).toBeLessThanOrEqual(
      (2 * (Date.now() - testStartedAt)) / 1000,
    );
  });
});
