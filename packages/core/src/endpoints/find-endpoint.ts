import type { Db } from "@thaw/db";
import { z } from "zod";
import { orgScope, type Actor } from "../auth/index.ts";
import { AppError } from "../errors/index.ts";
import { Slug } from "./endpoint-spec.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * How a request names an endpoint: its slug or id. Only its length is checked here: anything
 * that names no endpoint of the actor's org is findEndpoint's NOT_FOUND.
 */
export const EndpointRef = z.string().min(1).max(100);

/**
 * An endpoint of the actor's org by id or slug (how REST paths name it). Anything else —
 * another org's endpoint, a deleted one, a malformed name — is the same NOT_FOUND.
 */
export async function findEndpoint(db: Db, actor: Actor, endpoint: unknown) {
  const notFound = () =>
    new AppError("NOT_FOUND", `No endpoint '${String(endpoint).slice(0, 80)}'.`, {
      field: "endpoint",
    });
  if (typeof endpoint !== "string" || (!UUID.test(endpoint) && !Slug.safeParse(endpoint).success))
    throw notFound();
  const row = await db.endpoint.findFirst({
    where: {
      ...orgScope(actor),
      deletedAt: null,
      ...(UUID.test(endpoint) ? { id: endpoint.toLowerCase() } : { slug: endpoint }),
    },
  });
  if (!row) throw notFound();
  return row;
}
