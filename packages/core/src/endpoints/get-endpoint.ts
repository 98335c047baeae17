import type { Db } from "@thaw/db";
import { assertCan, type Actor } from "../auth/index.ts";
import type { EndpointView } from "./endpoint-spec.ts";
import { loadEndpointView } from "./endpoint-view.ts";
import { findEndpoint } from "./find-endpoint.ts";

/** An endpoint's configuration and its active deployment (REST's GET /endpoints/{endpoint}). */
export async function getEndpoint({
  actor,
  endpoint,
  db,
}: {
  actor: Actor;
  endpoint: unknown;
  db: Db;
}): Promise<EndpointView> {
  assertCan(actor, "endpoints:read");
  const row = await findEndpoint(db, actor, endpoint);
  return loadEndpointView(db, actor.orgId, row.id);
}
