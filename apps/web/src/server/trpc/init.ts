import {
  databaseBusyError,
  isAppError,
  resolveUserActor,
  trpcCodeOf,
  type Actor,
} from "@thaw/core";
import type { DbClient } from "@thaw/db";
import { initTRPC, TRPCError } from "@trpc/server";
import superjson from "superjson";
import { ZodError } from "zod";
import type { SessionUser } from "../auth.ts";

/**
 * What every procedure sees. The session is resolved from the request's cookie by the
 * transport (see context.ts); the org-scoped Actor is resolved by protectedProcedure, and
 * every use case in @thaw/core authorizes against it.
 */
export interface TrpcContext {
  db: DbClient;
  user: SessionUser | null;
  /** Org the client asked for (x-thaw-org header); the user's first org when absent. */
  orgSlug: string | undefined;
}

const t = initTRPC.context<TrpcContext>().create({
  transformer: superjson,
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    // Unexpected errors never reach the client with their internals.
    const internal = error.code === "INTERNAL_SERVER_ERROR" && !isAppError(cause);
    const { stack: _stack, ...data } = shape.data;
    return {
      ...shape,
      message: internal ? "Internal server error." : shape.message,
      data: {
        ...data,
        ...(isAppError(cause) && { appCode: cause.code, details: cause.details ?? null }),
        ...(cause instanceof ZodError && {
          zodIssues: cause.issues.map((i) => ({ path: i.path.join("."), message: i.message })),
        }),
      },
    };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * AppErrors thrown by use cases become tRPC errors through the one table in @thaw/core; a
 * database too busy for the call is SERVICE_UNAVAILABLE, as it is 503 on REST.
 */
const mapAppErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok) {
    const busy = databaseBusyError(result.error.cause);
    if (busy)
      throw new TRPCError({ code: trpcCodeOf(busy.code), message: busy.message, cause: busy });
  }
  if (!result.ok && isAppError(result.error.cause)) {
    const cause = result.error.cause;
    throw new TRPCError({ code: trpcCodeOf(cause.code), message: cause.message, cause });
  }
  return result;
});

export const publicProcedure = t.procedure.use(mapAppErrors);

/** Requires a signed-in user; no org needed (e.g. `me`). */
export const authedProcedure = publicProcedure.use(({ ctx, next }) => {
  if (!ctx.user) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in to continue." });
  return next({ ctx: { ...ctx, user: ctx.user } });
});

/** Requires a signed-in user and resolves their Actor in the requested (or first) org. */
export const protectedProcedure = authedProcedure.use(async ({ ctx, next }) => {
  const actor: Actor = await resolveUserActor({
    userId: ctx.user.id,
    orgSlug: ctx.orgSlug,
    db: ctx.db,
  });
  return next({ ctx: { ...ctx, actor } });
});
