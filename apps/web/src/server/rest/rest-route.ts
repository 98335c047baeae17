import { assertCan, authenticateApiKey, type Actor, type ApiKeyScope } from "@thaw/core";
import type { DbClient } from "@thaw/db";
import { getDb } from "../db.ts";
import { bearerToken, errorResponse } from "../http/json-route.ts";

// The one route builder of REST v1 (DESIGN.md §7): API key → actor, scope check, then the
// handler (parse → core → return); every error becomes {"error":{"code","message","details"}}
// with the status of core's one code table.

export interface RestContext {
  request: Request;
  actor: Extract<Actor, { type: "api_key" }>;
  params: Record<string, string>;
  db: DbClient;
}

export function restRoute(
  scope: ApiKeyScope,
  handler: (ctx: RestContext) => Promise<{ status?: number; body: unknown }>,
) {
  return async (
    request: Request,
    context: { params: Promise<Record<string, string | string[]>> },
  ): Promise<Response> => {
    try {
      const db = getDb();
      const actor = await authenticateApiKey({ key: bearerToken(request), db });
      assertCan(actor, scope);
      const raw = await context.params;
      const params = Object.fromEntries(
        Object.entries(raw).map(([k, v]) => [k, Array.isArray(v) ? v.join("/") : v]),
      );
      const { status = 200, body } = await handler({ request, actor, params, db });
      return Response.json(body, { status, headers: { "cache-control": "no-store" } });
    } catch (error) {
      return errorResponse(error, request);
    }
  };
}
