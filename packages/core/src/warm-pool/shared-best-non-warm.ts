import { directSql, Prisma, type DbClient } from "@thaw/db";
import type { BestNonWarm, BestNonWarmMemo } from "./best-non-warm-memo.ts";

// An endpoint's miss cost (best-non-warm-memo.ts) as one scheduler predicted it, kept on the
// endpoint's warm-pool row until it is due again, so that every other scheduler process — and
// this one after a restart — takes it instead of predicting it again. On bench:warm-handover
// with 2,530 endpoints and two schedulers, each process predicted every endpoint itself: the
// prediction's node shortlist ran 2,002 times in 30 s, 8.2 ms of Postgres each, two thirds of
// a core.

/**
 * The shared prediction for the deployment the endpoint runs, if it is still fresh at `now`;
 * the memo keeps it for what is left of its lifetime.
 */
export async function readSharedBestNonWarm(
  db: DbClient,
  endpointId: string,
  memo: BestNonWarmMemo,
  now: Date,
): Promise<BestNonWarm | undefined> {
  const [row] = await directSql(db).rows<{
    deploymentId: string;
    seconds: number | null;
    freshUntil: Date;
  }>(Prisma.sql`
    SELECT w."bestNonWarmPredictedFor"::text AS "deploymentId",
      w."bestNonWarmPredictedSeconds" AS seconds, w."bestNonWarmFreshUntil" AS "freshUntil"
    FROM "EndpointWarmPool" w JOIN "Endpoint" e ON e.id = w."endpointId"
    WHERE w."endpointId" = ${endpointId}::uuid
      AND w."bestNonWarmPredictedFor" = e."activeDeploymentId"
      AND w."bestNonWarmFreshUntil" > ${now}::timestamp`);
  if (!row) return undefined;
  const prediction = { deploymentId: row.deploymentId, seconds: row.seconds };
  memo.remember(endpointId, prediction, row.freshUntil.getTime() - now.getTime());
  return prediction;
}

/**
 * Shares a prediction this process made, fresh for `lifetimeMs` from `now`, on the endpoint's
 * warm-pool row (an endpoint without one yet — never tended — shares its next).
 */
export async function shareBestNonWarm(
  db: DbClient,
  endpointId: string,
  prediction: BestNonWarm,
  lifetimeMs: number,
  now: Date,
): Promise<void> {
  await directSql(db).execute(Prisma.sql`
    UPDATE "EndpointWarmPool"
    SET "bestNonWarmPredictedFor" = ${prediction.deploymentId}::uuid,
      "bestNonWarmPredictedSeconds" = ${prediction.seconds}::float8,
      "bestNonWarmFreshUntil" = ${new Date(now.getTime() + lifetimeMs)}::timestamp
    WHERE "endpointId" = ${endpointId}::uuid`);
}
