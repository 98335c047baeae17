import type { Db } from "@thaw/db";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import { MAX_ENDPOINTS_PER_ORG, type EndpointView } from "./endpoint-spec.ts";
import { ENDPOINT_VIEW_INCLUDE, toEndpointView } from "./endpoint-view.ts";

/** The org's live endpoints, configuration and active deployment each (REST's GET /endpoints). */
export async function listEndpointConfigs({
  actor,
  db,
}: {
  actor: Actor;
  db: Db;
}): Promise<{ endpoints: EndpointView[] }> {
  assertCan(actor, "endpoints:read");
  const rows = await db.endpoint.findMany({
    where: { ...orgScope(actor), deletedAt: null },
    orderBy: { createdAt: "asc" },
    take: MAX_ENDPOINTS_PER_ORG,
    include: ENDPOINT_VIEW_INCLUDE,
  });
  return { endpoints: rows.map(toEndpointView) };
}
