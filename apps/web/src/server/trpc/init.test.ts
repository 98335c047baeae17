import type { DbClient } from "@thaw/db";
import { describe, expect, it } from "vitest";
import { createCallerFactory, publicProcedure, router } from "./init.ts";

describe("tRPC error mapping", () => {
  it("a database too busy for the call is SERVICE_UNAVAILABLE, as it is 503 on REST", async () => {
    const busyRouter = router({
      busy: publicProcedure.query(() => {
        // What Prisma throws when the pool gave no transaction in time (its P2028).
        throw Object.assign(new Error("Unable to start a transaction in the given time."), {
          code: "P2028",
        });
      }),
      broken: publicProcedure.query(() => {
        throw Object.assign(new Error("unique constraint"), { code: "P2002" });
      }),
    });
    const caller = createCallerFactory(busyRouter)({
      db: {} as DbClient,
      user: null,
      orgSlug: undefined,
    });
    await expect(caller.busy()).rejects.toMatchObject({
      code: "SERVICE_UNAVAILABLE",
      message: expect.stringContaining("Retry in a second") as unknown,
    });
    await expect(caller.broken()).rejects.toMatchObject({ code: "INTERNAL_SERVER_ERROR" });
  });
});
