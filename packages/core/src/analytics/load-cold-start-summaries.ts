import type { Db } from "@thaw/db";
import type { ColdStartStatus, StartPath } from "../vocabulary/index.ts";
import { summarizeTimeToReady, type TimeToReadySummary } from "./summarize-time-to-ready.ts";

/** Cold starts per endpoint the headline figures are computed over (the most recent ones). */
export const SUMMARY_STARTS_PER_ENDPOINT = 200;

/**
 * Headline figures (p50 / p95 time to ready, path mix, last cold start) of many endpoints of
 * one org in one statement: a LATERAL join takes each endpoint's latest starts through the
 * (endpointId, requestedAt) index, so the read is bounded whatever the history holds.
 */
export async function loadColdStartSummaries(
  db: Db,
  orgId: string,
  endpointIds: readonly string[],
  perEndpoint = SUMMARY_STARTS_PER_ENDPOINT,
): Promise<Map<string, TimeToReadySummary>> {
  const rows =
    endpointIds.length === 0
      ? []
      : await db.$queryRaw<
          {
            endpointId: string;
            requestedAt: Date;
            path: StartPath;
            status: ColdStartStatus;
            actualSeconds: number | null;
          }[]
        >`
      SELECT c."endpointId", c."requestedAt", c.path::text AS path, c.status::text AS status,
             c."actualSeconds"
      FROM unnest(${[...endpointIds]}::uuid[]) AS e(id)
      CROSS JOIN LATERAL (
        SELECT "endpointId", "requestedAt", path, status, "actualSeconds"
        FROM "ColdStart"
        WHERE "endpointId" = e.id AND "orgId" = ${orgId}::uuid
        ORDER BY "requestedAt" DESC
        LIMIT ${perEndpoint}
      ) c`;
  const byEndpoint = new Map<string, typeof rows>();
  for (const row of rows) {
    const list = byEndpoint.get(row.endpointId) ?? [];
    list.push(row);
    byEndpoint.set(row.endpointId, list);
  }
  return new Map(endpointIds.map((id) => [id, summarizeTimeToReady(byEndpoint.get(id) ?? [])]));
}
