import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

// The web app's Prometheus metrics (GET /api/metrics with THAW_METRICS_TOKEN): every request
// of the three APIs people and machines call — REST v1, tRPC and the agent API — by route,
// method and status, with their latency; and the agents' telemetry taken in. Per process:
// every web replica is scraped and the queries sum over them.
//
// Labels are bounded: `route` is a REST path template from the OpenAPI document (never the
// path itself, which carries ids), a tRPC procedure the router has (an unknown name is
// "unknown"), or an agent API path (fixed, no parameters); status is the HTTP status.

/** API answers span a cached read (ms) to a registry inspection (seconds). */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export type ApiSurface = "rest" | "trpc" | "agent";

class WebMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: "thaw_http_requests_total",
    help: "API requests by surface (rest, trpc, agent), route template or procedure, method and status.",
    labelNames: ["surface", "route", "method", "status"] as const,
    registers: [this.registry],
  });
  readonly requestSeconds = new Histogram({
    name: "thaw_http_request_duration_seconds",
    help: "Time to the response's head (a stream's first byte, not its end), by surface and route.",
    labelNames: ["surface", "route"] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });
  readonly telemetryRecords = new Counter({
    name: "thaw_telemetry_records_total",
    help: "Phase events agents sent, by result: stored, or a duplicate of one already stored (a resend).",
    labelNames: ["result"] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
  }
}

const holder = globalThis as typeof globalThis & { __thawWebMetrics?: WebMetrics };

/** The process's one registry (Next may load this module more than once per process). */
export function webMetrics(): WebMetrics {
  return (holder.__thawWebMetrics ??= new WebMetrics());
}

/** Counts one answered request. */
export function observeRequest(
  surface: ApiSurface,
  route: string,
  method: string,
  status: number,
  startedAt: number,
): void {
  const metrics = webMetrics();
  metrics.requests.inc({ surface, route, method, status: String(status) });
  metrics.requestSeconds.observe({ surface, route }, (performance.now() - startedAt) / 1000);
}

/** A route handler, counted: its answer's status and time under `routeOf(request)`. */
export function countedRoute<C extends unknown[]>(
  surface: ApiSurface,
  routeOf: (request: Request) => string,
  handler: (request: Request, ...rest: C) => Promise<Response>,
): (request: Request, ...rest: C) => Promise<Response> {
  return async (request, ...rest) => {
    const startedAt = performance.now();
    let status = 500;
    try {
      const response = await handler(request, ...rest);
      status = response.status;
      return response;
    } finally {
      try {
        observeRequest(surface, routeOf(request), request.method, status, startedAt);
      } catch {
        // Counting never changes an answer: a request the label cannot be read from goes uncounted.
      }
    }
  };
}
