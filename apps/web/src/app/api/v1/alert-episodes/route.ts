import { listAlertEpisodes } from "@thaw/core";
import { restRoute } from "../../../../server/rest/rest-route.ts";

/** GET /api/v1/alert-episodes — firing and resolved alerts, newest first. */
export const GET = restRoute("endpoints:read", async ({ request, actor, db }) => ({
  body: await listAlertEpisodes({
    actor,
    query: Object.fromEntries(new URL(request.url).searchParams),
    db,
  }),
}));
