import { getEndpointWhatIf } from "@thaw/core";
import { restRoute } from "../../../../../../server/rest/rest-route.ts";
import { runWhatIfInScheduler } from "../../../../../../server/what-if-runner.ts";

/** GET /api/v1/endpoints/{endpoint}/what-if?from=&to= — its recorded load replayed under other settings. */
export const GET = restRoute("endpoints:read", async ({ request, actor, params, db }) => ({
  body: await getEndpointWhatIf({
    actor,
    endpoint: params.endpoint,
    input: Object.fromEntries(new URL(request.url).searchParams),
    db,
    run: runWhatIfInScheduler,
  }),
}));
