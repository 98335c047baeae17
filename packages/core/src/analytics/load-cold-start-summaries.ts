import type { Db } from "@thaw/db";
import type { ColdStartStatus, StartPath } from "../vocabulary/index.ts";
import {
  summarizeTimeToReady,
  TIME_TO_READY_WINDOW,
  type TimeToReadySummary,
} from "./summarize-time-to-ready.ts";

const CLOSED: ColdStartStatus[] = ["succeeded", "failed"];

export interface RecentClosedStart {
  requestedAt: Date;
  path: StartPath;
  status: ColdStartStatus;
  actualSeconds: number | null;
}

/**
 * The time-to-ready window (TIME_TO_READY_WINDOW) of many endpoints of one org in one statement: a LATERAL join
 * takes each endpoint's latest starts through the (endpointId, requestedAt) index, so the
 * read is bounded whatever the history holds. Newest first.
 */
export async function loadRecentClosedStarts(
  db: Db,
  orgId: string,
  endpointIds: readonly string[],
): Promise<Map<string, RecentClosedStart[]>> {
  const rows =
    endpointIds.length === 0
      ? []
      : await db.$queryRaw<(RecentClosedStart & { endpointId: string })[]>`
      SELECT c."endpointId", c."requestedAt", c.path::text AS path, c.status::text AS status,
             c."actualSeconds"
      FROM unnest(${[...endpointIds]}::uuid[]) AS e(id)
      CROSS JOIN LATERAL (
        SELECT "endpointId", "requestedAt", path, status, "actualSeconds"
        FROM "ColdStart"
        WHERE "endpointId" = e.id AND "orgId" = ${orgId}::uuid
          AND status = ANY(${CLOSED}::"ColdStartStatus"[])
        ORDER BY "requestedAt" DESC
        LIMIT ${TIME_TO_READY_WINDOW}
      ) c
      ORDER BY c."endpointId", c."requestedAt" DESC`;
  const byEndpoint = new Map<string, RecentClosedStart[]>(endpointIds.map((id) => [id, []]));
  for (const { endpointId, ...start } of rows) byEndpoint.get(endpointId)!.push(start);
  return byEndpoint;
}

/** Headline figures (p50 / p95 time to ready, path mix, last cold start) of many endpoints. */
export async function loadColdStartSummaries(
  db: Db,
  orgId: string,
  endpointIds: readonly string[],
): Promise<Map<string, TimeToReadySummary>> {
  const windows = await loadRecentClosedStarts(db, orgId, endpointIds);
  return new Map(endpointIds.map((id) => [id, summarizeTimeToReady(windows.get(id)!)]));
}
