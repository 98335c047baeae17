import { getSessionUser } from "../auth.ts";
import { getDb } from "../db.ts";
import type { TrpcContext } from "./init.ts";

/** Context for one HTTP request: the session cookie → user; the org header → org slug. */
export async function createRequestContext(headers: Headers): Promise<TrpcContext> {
  return {
    db: getDb(),
    user: await getSessionUser(headers),
    orgSlug: headers.get("x-thaw-org") ?? undefined,
  };
}
