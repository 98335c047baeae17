import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { log } from "../../../../server/logger.ts";
import { createRequestContext } from "../../../../server/trpc/context.ts";
import { env } from "../../../../env.ts";
import {
  boundedTrpcRequest,
  crossSiteRefusal,
  MAX_TRPC_BATCH_SIZE,
} from "../../../../server/trpc/request-limits.ts";
import { appRouter } from "../../../../server/trpc/root.ts";
import { trpcRouteLabel } from "../../../../server/metrics/trpc-route-label.ts";
import { countedRoute } from "../../../../server/metrics/web-metrics.ts";

const handler = countedRoute("trpc", trpcRouteLabel, async (incoming: Request) => {
  const refused = crossSiteRefusal(incoming, new URL(env().BETTER_AUTH_URL).origin);
  if (refused) return refused;
  const request = boundedTrpcRequest(incoming);
  if (request instanceof Response) return request;
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req: request,
    router: appRouter,
    createContext: () => createRequestContext(request.headers),
    // A batch is one request running many procedures: bounded, like every other input.
    maxBatchSize: MAX_TRPC_BATCH_SIZE,
    onError({ error, path }) {
      if (error.code === "INTERNAL_SERVER_ERROR")
        log().error({ err: error.cause ?? error, path }, "tRPC procedure failed");
    },
  });
});

export { handler as GET, handler as POST };
