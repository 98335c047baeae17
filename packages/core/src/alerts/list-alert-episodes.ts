import type { DbClient } from "@thaw/db";
import { asAttributes } from "../analytics/get-deployment-breakdown.ts";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import { findEndpoint } from "../endpoints/find-endpoint.ts";
import { parseInput } from "../errors/index.ts";
import { ListAlertEpisodesQuery, type AlertEpisodeView } from "./alert-spec.ts";

/** The org's alert episodes, newest first: open ones, resolved ones, or both; of one endpoint or all. */
export async function listAlertEpisodes({
  actor,
  query,
  db,
  where = "query",
}: {
  actor: Actor;
  query: unknown;
  db: DbClient;
  where?: string;
}): Promise<{ episodes: AlertEpisodeView[] }> {
  assertCan(actor, "endpoints:read");
  const q = parseInput(ListAlertEpisodesQuery, query, where);
  const endpointId =
    q.endpoint === undefined ? undefined : (await findEndpoint(db, actor, q.endpoint)).id;
  const rows = await db.alertEpisode.findMany({
    where: {
      ...orgScope(actor),
      ...(endpointId && { endpointId }),
      ...(q.state === "open" && { resolvedAt: null }),
      ...(q.state === "resolved" && { resolvedAt: { not: null } }),
    },
    orderBy: { openedAt: "desc" },
    take: q.limit,
    include: { rule: { select: { id: true, name: true, kind: true } } },
  });
  const slugs = new Map(
    (
      await db.endpoint.findMany({
        where: { id: { in: [...new Set(rows.map((r) => r.endpointId))] }, ...orgScope(actor) },
        select: { id: true, slug: true },
      })
    ).map((e) => [e.id, e.slug]),
  );
  return {
    episodes: rows.map((r) => {
      const details = asAttributes(r.details);
      return {
        id: r.id,
        rule: r.rule,
        endpoint: { id: r.endpointId, slug: slugs.get(r.endpointId) ?? "" },
        severity: r.severity,
        summary: typeof details.summary === "string" ? details.summary : "",
        details,
        openedAt: r.openedAt.toISOString(),
        resolvedAt: r.resolvedAt?.toISOString() ?? null,
      };
    }),
  };
}
