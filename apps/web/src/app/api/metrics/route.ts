import { bearerMatches } from "@thaw/core";
import { env } from "../../../env.ts";
import { webMetrics } from "../../../server/metrics/web-metrics.ts";

// GET /api/metrics — this process's Prometheus metrics, for the operator only: they show every
// tenant's traffic, so only THAW_METRICS_TOKEN opens them (unset: there is nothing here).
export async function GET(request: Request): Promise<Response> {
  const token = env().THAW_METRICS_TOKEN;
  if (!token) return new Response("not found\n", { status: 404 });
  if (!bearerMatches(request.headers.get("authorization"), token))
    return new Response("/api/metrics wants Authorization: Bearer <THAW_METRICS_TOKEN>\n", {
      status: 401,
      headers: { "www-authenticate": "Bearer" },
    });
  const { registry } = webMetrics();
  return new Response(await registry.metrics(), {
    headers: { "content-type": registry.contentType, "cache-control": "no-store, no-transform" },
  });
}
