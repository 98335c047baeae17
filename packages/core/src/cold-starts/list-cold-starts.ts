import type { Db } from "@thaw/db";
import { z } from "zod";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import { parseInput } from "../errors/index.ts";

export const ListColdStartsInput = z
  .object({
    endpointId: z.uuid().optional(),
    limit: z.number().int().min(1).max(100).default(25),
  })
  .strict();

/** The org's most recent cold starts (optionally of one endpoint), newest first. */
export async function listColdStarts({
  actor,
  input,
  db,
}: {
  actor: Actor;
  input: unknown;
  db: Db;
}) {
  assertCan(actor, "endpoints:read");
  const { endpointId, limit } = parseInput(ListColdStartsInput, input ?? {});
  const rows = await db.coldStart.findMany({
    where: { ...orgScope(actor), ...(endpointId ? { endpointId } : {}) },
    orderBy: { requestedAt: "desc" },
    take: limit,
    select: {
      id: true,
      attempt: true,
      trigger: true,
      path: true,
      locality: true,
      status: true,
      predictedSeconds: true,
      predictedMeanSeconds: true,
      predictedP10Seconds: true,
      predictedP90Seconds: true,
      actualSeconds: true,
      requestedAt: true,
      error: true,
      explored: true,
      endpoint: { select: { slug: true } },
      node: { select: { name: true } },
    },
  });
  return rows.map(({ endpoint, node, ...row }) => ({
    ...row,
    endpointSlug: endpoint.slug,
    nodeName: node?.name ?? null,
  }));
}
