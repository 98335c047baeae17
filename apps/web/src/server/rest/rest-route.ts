import { assertCan, authenticateApiKey, type Actor, type ApiKeyScope } from "@thaw/core";
import type { DbClient } from "@thaw/db";
import { getDb } from "../db.ts";
import { clientAddressOf } from "../http/client-of.ts";
import { bearerToken, errorResponse, jsonResponse } from "../http/json-route.ts";
import { consumeLimit } from "../limits/rate-limits.ts";
import { restRouteLabel } from "../metrics/rest-route-label.ts";
import { observeRequest } from "../metrics/web-metrics.ts";
import { beginApiCallTrace } from "../tracing/api-trace.ts";
import { consumeRestQuota, rateLimitHeaders } from "./rate-limit.ts";

// The one route builder of REST v1 (ARCHITECTURE.md §7): the client address's budget (before any
// key is looked up, so guessing keys costs budget too), API key → actor, the key's and its org's rate limits,
// scope check, then the handler (parse → core → return); every error becomes {"error":{"code","message","details"}}
// with the status of core's one code table.

export interface RestContext {
  request: Request;
  actor: Extract<Actor, { type: "api_key" }>;
  params: Record<string, string>;
  db: DbClient;
  /** The call's trace context, for the work it causes (tracing/api-trace.ts). */
  traceparent: string | null;
}

/** What Next hands a route handler: params only for a route with dynamic segments. */
export interface RouteContext {
  params?: Promise<Record<string, string | string[] | undefined>> | undefined;
}

export function restRoute(
  scope: ApiKeyScope,
  /** A JSON body (and status), or a whole response (a stream). */
  handler: (
    ctx: RestContext,
  ) => Promise<{ status?: number; body: unknown } | { response: Response }>,
) {
  // Next passes no context (or one without params) to a route without dynamic segments in
  // the built server, so the route's params are whatever it got, or none.
  return async (request: Request, context?: RouteContext): Promise<Response> => {
    // The route template once per request, for both the metrics and the call's span.
    const startedAt = performance.now();
    const route = restRouteLabel(request);
    const trace = beginApiCallTrace(request, route);
    let status = 500;
    try {
      const response = await respond(request, context, trace.traceparent);
      status = response.status;
      return response;
    } finally {
      trace.end(status);
      observeRequest("rest", route, request.method, status, startedAt);
    }
  };

  async function respond(
    request: Request,
    context: RouteContext | undefined,
    traceparent: string | null,
  ): Promise<Response> {
    try {
      await consumeLimit("apiPerAddress", clientAddressOf(request));
      const db = getDb();
      const actor = await authenticateApiKey({ key: bearerToken(request), db });
      const quota = await consumeRestQuota(actor);
      assertCan(actor, scope);
      const raw = (await context?.params) ?? {};
      const params = Object.fromEntries(
        Object.entries(raw).map(([k, v]) => [k, Array.isArray(v) ? v.join("/") : (v ?? "")]),
      );
      const answer = await handler({ request, actor, params, db, traceparent });
      if ("response" in answer) {
        for (const [name, value] of Object.entries(rateLimitHeaders(quota)))
          answer.response.headers.set(name, value);
        return answer.response;
      }
      const { status = 200, body } = answer;
      return jsonResponse(body, {
        status,
        headers: { "cache-control": "no-store", ...rateLimitHeaders(quota) },
      });
    } catch (error) {
      return errorResponse(error, request);
    }
  }
}
