import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

// The agent's Prometheus metrics (GET /metrics). Labels stay low-cardinality: path, phase,
// outcome — never a host, replica or cold start id (a sim fleet runs 1,000 hosts).

/** Phase durations span 1 ms handovers to 20-minute pulls. */
const PHASE_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1200];

export class AgentMetrics {
  readonly registry = new Registry();
  readonly starts = new Counter({
    name: "thaw_agent_starts_total",
    help: "Replica starts by path and outcome (accepted, succeeded, failed, refused).",
    labelNames: ["path", "outcome"] as const,
    registers: [this.registry],
  });
  readonly startsInFlight = new Gauge({
    name: "thaw_agent_starts_in_flight",
    help: "Starts accepted and not yet ready or failed.",
    registers: [this.registry],
  });
  readonly phaseSeconds = new Histogram({
    name: "thaw_agent_phase_duration_seconds",
    help: "Reported phase durations (simulated seconds on sim hosts), by path and phase.",
    labelNames: ["path", "phase"] as const,
    buckets: PHASE_BUCKETS,
    registers: [this.registry],
  });
  readonly heartbeats = new Counter({
    name: "thaw_agent_heartbeats_total",
    help: "Heartbeats to the control plane, by result (sent, failed).",
    labelNames: ["result"] as const,
    registers: [this.registry],
  });
  readonly joins = new Counter({
    name: "thaw_agent_joins_total",
    help: "Join attempts, by result (joined, failed).",
    labelNames: ["result"] as const,
    registers: [this.registry],
  });
  readonly telemetryQueueDepth = new Gauge({
    name: "thaw_agent_telemetry_queue_depth",
    help: "Telemetry records (phase events and outcomes) not yet acknowledged by the control plane.",
    registers: [this.registry],
  });
  readonly telemetrySpoolBytes = new Gauge({
    name: "thaw_agent_telemetry_spool_bytes",
    help: "Size of the on-disk telemetry spool.",
    registers: [this.registry],
  });
  readonly telemetryBatches = new Counter({
    name: "thaw_agent_telemetry_batches_total",
    help: "Telemetry batches sent, by result (acknowledged, failed, rejected).",
    labelNames: ["result"] as const,
    registers: [this.registry],
  });
  readonly telemetryRecords = new Counter({
    name: "thaw_agent_telemetry_records_total",
    help: "Telemetry records acknowledged by the control plane.",
    registers: [this.registry],
  });
  readonly httpRequests = new Counter({
    name: "thaw_agent_http_requests_total",
    help: "Agent API requests by route and status.",
    labelNames: ["route", "status"] as const,
    registers: [this.registry],
  });
  readonly hosts = new Gauge({
    name: "thaw_agent_hosts",
    help: "Hosts served by this process, by membership status.",
    labelNames: ["status"] as const,
    registers: [this.registry],
  });

  /** Process metrics (CPU, memory, event-loop lag percentiles); once per process. */
  withProcessMetrics(): this {
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
    return this;
  }
}
