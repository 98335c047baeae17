import { AppError, assertCan, resolveUserActor } from "@thaw/core";
import { getSessionUser } from "../../../server/auth.ts";
import { getDb } from "../../../server/db.ts";
import { errorResponse } from "../../../server/http/json-route.ts";
import { liveEventResponse } from "../../../server/live/live-events.ts";

/**
 * GET /api/live[?org=slug] — the dashboard's server-sent events (session cookie; an
 * EventSource cannot send headers, hence the org in the query). Same events as
 * /api/v1/stream.
 */
export async function GET(request: Request): Promise<Response> {
  try {
    const user = await getSessionUser(request.headers);
    if (!user) throw new AppError("UNAUTHENTICATED", "Sign in to continue.");
    const actor = await resolveUserActor({
      userId: user.id,
      orgSlug: new URL(request.url).searchParams.get("org") ?? undefined,
      db: getDb(),
    });
    assertCan(actor, "endpoints:read");
    return await liveEventResponse(actor.orgId, request.signal);
  } catch (error) {
    return errorResponse(error, request);
  }
}
