import type { Db } from "@thaw/db";
import { z } from "zod";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import { EndpointRef, findEndpoint } from "../endpoints/find-endpoint.ts";
import { parseInput } from "../errors/index.ts";
import { toDeploymentView } from "./deployment-record.ts";
import { DeploymentView } from "./deployment-spec.ts";

export const ListDeploymentsQuery = z
  .object({ limit: z.coerce.number().int().min(1).max(100).default(20) })
  .strict();

/** The dashboard's call: which endpoint, and the query REST takes. */
export const ListDeploymentsRequest = ListDeploymentsQuery.extend({ endpoint: EndpointRef });

export const DeploymentList = z
  .object({ deployments: z.array(DeploymentView) })
  .meta({ id: "DeploymentList" });

/** An endpoint's deployments, newest version first. */
export async function listDeployments({
  actor,
  endpoint,
  input,
  db,
  where = "input",
}: {
  actor: Actor;
  endpoint: unknown;
  input?: unknown;
  db: Db;
  where?: string;
}): Promise<z.infer<typeof DeploymentList>> {
  assertCan(actor, "endpoints:read");
  const { limit } = parseInput(ListDeploymentsQuery, input ?? {}, where);
  const found = await findEndpoint(db, actor, endpoint);
  const rows = await db.deployment.findMany({
    where: { ...orgScope(actor), endpointId: found.id },
    orderBy: { version: "desc" },
    take: limit,
  });
  return { deployments: rows.map(toDeploymentView) };
}
