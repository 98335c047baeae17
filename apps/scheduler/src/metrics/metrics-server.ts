import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { bearerMatches } from "@thaw/core";
import type { Logger } from "../logger.ts";
import type { SchedulerMetrics } from "./scheduler-metrics.ts";

// GET /metrics for Prometheus, on its own port: the scheduler serves nothing else over HTTP.
// It shows every tenant's load (queues, fleet, endpoint ids), so it answers only the
// operator's bearer token (THAW_METRICS_TOKEN), as the agent's and the web app's do.

export interface RunningMetricsServer {
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(opts: {
  metrics: SchedulerMetrics;
  token: string;
  host: string;
  port: number;
  log: Logger;
}): Promise<RunningMetricsServer> {
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? "/", "http://scheduler.invalid").pathname;
    if (path !== "/metrics") {
      response.writeHead(404, { "content-type": "text/plain" }).end("only /metrics is here\n");
      return;
    }
    if (request.method !== "GET") {
      response.writeHead(405, { allow: "GET", "content-type": "text/plain" }).end();
      return;
    }
    if (!bearerMatches(request.headers.authorization, opts.token)) {
      response
        .writeHead(401, { "www-authenticate": "Bearer", "content-type": "text/plain" })
        .end("/metrics wants Authorization: Bearer <THAW_METRICS_TOKEN>\n");
      return;
    }
    opts.metrics.render().then(
      (text) => response.writeHead(200, { "content-type": opts.metrics.contentType }).end(text),
      (error: unknown) => {
        opts.log.error({ err: String(error) }, "metrics render failed");
        response.writeHead(500, { "content-type": "text/plain" }).end("metrics failed\n");
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${opts.host.includes(":") ? `[${opts.host}]` : opts.host}:${port}/metrics`;
  opts.log.info({ url }, "metrics listening");
  return {
    url,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
