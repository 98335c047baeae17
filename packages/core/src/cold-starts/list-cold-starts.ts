import type { Db } from "@thaw/db";
import { z } from "zod";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import { parseInput } from "../errors/index.ts";
import { ColdStartStatus, ColdStartTrigger, StartPath } from "../vocabulary/index.ts";

export const ListColdStartsInput = z
  .object({
    endpointId: z.uuid().optional(),
    limit: z.number().int().min(1).max(100).default(25),
  })
  .strict();

/** A cold start as the dashboard lists it. */
export const ColdStartListItem = z.object({
  id: z.string(),
  attempt: z.number(),
  trigger: ColdStartTrigger,
  path: StartPath,
  locality: z.string(),
  status: ColdStartStatus,
  predictedSeconds: z.number(),
  predictedMeanSeconds: z.number().nullable(),
  predictedP10Seconds: z.number().nullable(),
  predictedP90Seconds: z.number().nullable(),
  actualSeconds: z.number().nullable(),
  requestedAt: z.date(),
  error: z.string().nullable(),
  explored: z.boolean(),
  endpointSlug: z.string(),
  nodeName: z.string().nullable(),
});
export const ColdStartListItems = z.array(ColdStartListItem);
export type ColdStartListItems = z.infer<typeof ColdStartListItems>;

/** The org's most recent cold starts (optionally of one endpoint), newest first. */
export async function listColdStarts({
  actor,
  input,
  db,
}: {
  actor: Actor;
  input: unknown;
  db: Db;
}): Promise<ColdStartListItems> {
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
