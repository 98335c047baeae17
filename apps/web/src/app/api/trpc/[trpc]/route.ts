import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { log } from "../../../../server/logger.ts";
import { createRequestContext } from "../../../../server/trpc/context.ts";
import { appRouter } from "../../../../server/trpc/root.ts";

const handler = (request: Request) =>
  fetchRequestHandler({
    endpoint: "/api/trpc",
    req: request,
    router: appRouter,
    createContext: () => createRequestContext(request.headers),
    onError({ error, path }) {
      if (error.code === "INTERNAL_SERVER_ERROR")
        log().error({ err: error.cause ?? error, path }, "tRPC procedure failed");
    },
  });

export { handler as GET, handler as POST };
