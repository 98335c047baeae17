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

/** The NOT_FOUND of a name that is no endpoint of the actor's org. */
export function endpointNotFound(endpoint: unknown): AppError {
  return new AppError("NOT_FOUND", `No endpoint '${String(endpoint).slice(0, 80)}'.`, {
    field: "endpoint",
  });
}

/**
 * What a request's endpoint name is: an id (lower-cased) or a slug. A name that can be
 * neither is NOT_FOUND here, before any query.
 */
export function endpointRefOf(endpoint: unknown): { id: string } | { slug: string } {
  if (typeof endpoint !== "string") throw endpointNotFound(endpoint);
  if (UUID.test(endpoint)) return { id: endpoint.toLowerCase() };
  if (Slug.safeParse(endpoint).success) return { slug: endpoint };
  throw endpointNotFound(endpoint);
}

/**
 * An endpoint of the actor's org by id or slug (how REST paths name it). Anything else —
 * another org's endpoint, a deleted one, a malformed name — is the same NOT_FOUND.
 */
export async function findEndpoint(db: Db, actor: Actor, endpoint: unknown) {
  const row = await db.endpoint.findFirst({
    where: { ...orgScope(actor), deletedAt: null, ...endpointRefOf(endpoint) },
  });
  if (!row) throw endpointNotFound(endpoint);
  return row;
}
