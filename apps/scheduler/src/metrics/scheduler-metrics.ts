import {
  QUEUES,
  readFleetGauges,
  readRecentGpuTime,
  type ClosedColdStartFacts,
  type PlacedColdStart,
  type QueueKey,
} from "@thaw/core";
import { BoundedLabelValues } from "@thaw/core/metrics";
import type { DbClient } from "@thaw/db";
import type { Job, Queue } from "bullmq";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

// The scheduler's Prometheus metrics (GET /metrics on THAW_METRICS_PORT). Counters and
// histograms count what this process did (a place job's decisions, a closed start's phases);
// gauges of shared state (queues, fleet, warm pools) are read from Redis and Postgres at
// scrape time, so every scheduler replica reports the same value: query them with max(), not
// sum(). Labels are bounded: queue, path, phase, outcome, GPU model and state are closed sets
// or the fleet's few GPU models; the one label from data, endpoint, is held to
// THAW_METRICS_MAX_ENDPOINTS values per process (BoundedLabelValues), the rest share "_other".

/** Queue waits and job runs span a few milliseconds (place) to minutes (snapshot captures). */
const JOB_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** Cold starts and their phases: sub-second handovers to 20-minute pulls. */
const SECONDS_BUCKETS = [
  0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1200,
];
/** actual / predicted: 1 is a perfect prediction. */
const RATIO_BUCKETS = [0.25, 0.5, 0.67, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 2, 4];

const JOB_STATES = ["waiting", "active", "delayed", "prioritized", "failed"] as const;

export interface SchedulerMetricsSources {
  db: DbClient;
  queues: { [K in QueueKey]: Queue };
}

export class SchedulerMetrics {
  readonly registry = new Registry();
  private readonly endpoints: BoundedLabelValues;

  readonly jobs = new Gauge({
    name: "thaw_queue_jobs",
    help: "Jobs in each queue by state (read from Redis at scrape time; the same on every scheduler).",
    labelNames: ["queue", "state"] as const,
    registers: [this.registry],
  });
  readonly jobWait = new Histogram({
    name: "thaw_queue_job_wait_seconds",
    help: "Time from a job's enqueue (or its delay's end) to a worker taking it, by queue.",
    labelNames: ["queue"] as const,
    buckets: JOB_BUCKETS,
    registers: [this.registry],
  });
  readonly jobRun = new Histogram({
    name: "thaw_queue_job_run_seconds",
    help: "Time a worker of this process spent on a job, by queue and result (completed, failed).",
    labelNames: ["queue", "result"] as const,
    buckets: JOB_BUCKETS,
    registers: [this.registry],
  });
  readonly placements = new Counter({
    name: "thaw_placements_total",
    help: "Place jobs by outcome: placed (at least one start committed), unplaceable (no feasible option), skipped.",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  readonly decisions = new Counter({
    name: "thaw_placement_decisions_total",
    help: "Cold starts committed, by chosen path, what the node held (locality) and reason (best predicted, or explored).",
    labelNames: ["path", "locality", "reason"] as const,
    registers: [this.registry],
  });
  readonly coldStarts = new Counter({
    name: "thaw_cold_starts_total",
    help: "Closed cold starts by endpoint id, path and outcome.",
    labelNames: ["endpoint", "path", "outcome"] as const,
    registers: [this.registry],
  });
  readonly coldStartSeconds = new Histogram({
    name: "thaw_cold_start_duration_seconds",
    help: "Time to ready of succeeded cold starts, by path.",
    labelNames: ["path"] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });
  readonly phaseSeconds = new Histogram({
    name: "thaw_cold_start_phase_duration_seconds",
    help: "Measured phase durations of closed cold starts, by path and phase.",
    labelNames: ["path", "phase"] as const,
    buckets: SECONDS_BUCKETS,
    registers: [this.registry],
  });
  readonly predictionRatio = new Histogram({
    name: "thaw_prediction_ratio",
    help: "Succeeded cold starts' actual / predicted mean time to ready, by path (1 is exact).",
    labelNames: ["path"] as const,
    buckets: RATIO_BUCKETS,
    registers: [this.registry],
  });
  readonly slowerThanP90 = new Counter({
    name: "thaw_cold_starts_slower_than_p90_total",
    help: "Succeeded cold starts slower than their predicted p90, by path (about 10% when the interval is calibrated).",
    labelNames: ["path"] as const,
    registers: [this.registry],
  });
  readonly fleetGpus = new Gauge({
    name: "thaw_fleet_gpus",
    help: "GPUs of hosts not terminated, by GPU model and state (serving, starting, warm, draining, free, not_ready).",
    labelNames: ["gpu_model", "state"] as const,
    registers: [this.registry],
  });
  readonly warmReplicas = new Gauge({
    name: "thaw_warm_pool_replicas",
    help: "Idle initialised replicas held by warm pools, by GPU model.",
    labelNames: ["gpu_model"] as const,
    registers: [this.registry],
  });
  readonly warmGpus = new Gauge({
    name: "thaw_warm_pool_gpus",
    help: "GPUs held by warm pools' idle replicas, by GPU model.",
    labelNames: ["gpu_model"] as const,
    registers: [this.registry],
  });
  readonly warmIdleGpuSeconds = new Gauge({
    name: "thaw_warm_pool_idle_gpu_seconds",
    help: "GPU-seconds the current warm replicas have been idle since they last served, by GPU model.",
    labelNames: ["gpu_model"] as const,
    registers: [this.registry],
  });
  readonly gpuSecondsLastHour = new Gauge({
    name: "thaw_gpu_seconds_last_hour",
    help: "GPU-seconds of the last hour by what the GPUs did (serving, starting, warm_idle, failed, stopping), from the GPU-time ledger.",
    labelNames: ["category"] as const,
    registers: [this.registry],
  });
  readonly gpuCostLastHour = new Gauge({
    name: "thaw_gpu_cost_usd_last_hour",
    help: "What the last hour's GPU time cost at the hosts' prices, by category (hosts without a price add nothing).",
    labelNames: ["category"] as const,
    registers: [this.registry],
  });
  readonly scrapeErrors = new Counter({
    name: "thaw_metrics_collect_errors_total",
    help: "Scrapes whose read of Redis or Postgres failed (the gauges keep their last values).",
    labelNames: ["source"] as const,
    registers: [this.registry],
  });

  constructor(
    private readonly sources: SchedulerMetricsSources,
    options: { maxEndpoints: number },
  ) {
    this.endpoints = new BoundedLabelValues(options.maxEndpoints);
  }

  /** Process metrics (CPU, memory, event-loop lag); once per process. */
  withProcessMetrics(): this {
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
    return this;
  }

  /** The exposition text, after reading the shared state the gauges show. */
  async render(): Promise<string> {
    await Promise.all([this.collectQueues(), this.collectFleet()]);
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** A worker took `job` off `queue` and finished it (or failed it). */
  observeJob(queue: QueueKey, job: Job, result: "completed" | "failed"): void {
    const started = job.processedOn;
    if (started === undefined) return;
    const name = QUEUES[queue].name;
    const enqueued = job.timestamp + (job.delay ?? 0);
    this.jobWait.observe({ queue: name }, Math.max(0, started - enqueued) / 1000);
    const finished = job.finishedOn ?? Date.now();
    this.jobRun.observe({ queue: name, result }, Math.max(0, finished - started) / 1000);
  }

  observePlacement(result: { kind: string; placed: readonly PlacedColdStart[] }): void {
    this.placements.inc({ outcome: result.placed.length > 0 ? "placed" : result.kind });
    for (const start of result.placed)
      this.decisions.inc({
        path: start.path,
        locality: start.locality,
        reason: start.explored ? "explored" : "best_predicted",
      });
  }

  observeClosedColdStart(closed: ClosedColdStartFacts): void {
    const { path } = closed;
    this.coldStarts.inc({
      endpoint: this.endpoints.labelFor(closed.endpointId),
      path,
      outcome: closed.status,
    });
    for (const { phase, seconds } of closed.phases)
      this.phaseSeconds.observe({ path, phase }, seconds);
    if (closed.status !== "succeeded" || closed.actualSeconds === null) return;
    this.coldStartSeconds.observe({ path }, closed.actualSeconds);
    if (closed.predictedMeanSeconds && closed.predictedMeanSeconds > 0)
      this.predictionRatio.observe({ path }, closed.actualSeconds / closed.predictedMeanSeconds);
    if (closed.predictedP90Seconds !== null && closed.actualSeconds > closed.predictedP90Seconds)
      this.slowerThanP90.inc({ path });
  }

  private async collectQueues(): Promise<void> {
    try {
      const keys = Object.keys(QUEUES) as QueueKey[];
      const counts = await Promise.all(
        keys.map((key) => this.sources.queues[key].getJobCounts(...JOB_STATES)),
      );
      keys.forEach((key, i) => {
        for (const state of JOB_STATES)
          this.jobs.set({ queue: QUEUES[key].name, state }, counts[i]![state] ?? 0);
      });
    } catch {
      this.scrapeErrors.inc({ source: "redis" });
    }
  }

  private async collectFleet(): Promise<void> {
    try {
      const [gauges, recent] = await Promise.all([
        readFleetGauges({ db: this.sources.db }),
        readRecentGpuTime({ db: this.sources.db, windowSeconds: 3_600 }),
      ]);
      this.gpuSecondsLastHour.reset();
      this.gpuCostLastHour.reset();
      for (const c of recent) {
        this.gpuSecondsLastHour.set({ category: c.category }, c.gpuSeconds);
        this.gpuCostLastHour.set({ category: c.category }, c.usd);
      }
      // Reset first: a GPU model or state that went away must not keep its last value.
      this.fleetGpus.reset();
      this.warmReplicas.reset();
      this.warmGpus.reset();
      this.warmIdleGpuSeconds.reset();
      for (const g of gauges.gpus)
        this.fleetGpus.set({ gpu_model: g.gpuModel, state: g.state }, g.count);
      for (const w of gauges.warmPool) {
        this.warmReplicas.set({ gpu_model: w.gpuModel }, w.replicas);
        this.warmGpus.set({ gpu_model: w.gpuModel }, w.gpus);
        this.warmIdleGpuSeconds.set({ gpu_model: w.gpuModel }, w.idleGpuSeconds);
      }
    } catch {
      this.scrapeErrors.inc({ source: "postgres" });
    }
  }
}
