import { actorCan, AppError, assertCan, resolveUserActor } from "@thaw/core";
import { getSessionUser } from "../../../server/auth.ts";
import { getDb } from "../../../server/db.ts";
import { errorResponse } from "../../../server/http/json-route.ts";
import { liveEventResponse } from "../../../server/live/live-events.ts";

/**
 * GET /api/live[?org=slug] — the dashboard's server-sent events (session cookie; an
 * EventSource cannot send headers, hence the org in the query). Same events as
 * /api/v1/stream, under the same limits; the stream closes once the session ends or the
 * user is no longer a member who may read the org's endpoints.
 */
export async function GET(request: Request): Promise<Response> {
  try {
    const user = await getSessionUser(request.headers);
    if (!user) throw new AppError("UNAUTHENTICATED", "Sign in to continue.");
    const db = getDb();
    const orgSlug = new URL(request.url).searchParams.get("org") ?? undefined;
    const actor = await resolveUserActor({ userId: user.id, orgSlug, db });
    assertCan(actor, "endpoints:read");
    return await liveEventResponse({
      orgId: actor.orgId,
      principal: `user:${user.id}`,
      signal: request.signal,
      stillAllowed: async () => {
        const session = await getSessionUser(request.headers);
        if (session?.id !== user.id) return false;
        const again = await resolveUserActor({ userId: user.id, orgSlug, db }).catch(() => null);
        return again?.orgId === actor.orgId && actorCan(again, "endpoints:read");
      },
    });
  } catch (error) {
    return errorResponse(error, request);
  }
}
