import type { DbClient, DbTransaction } from "@thaw/db";
import type { TelemetryBatch } from "@thaw/protocol";
import type { Actor } from "../auth/index.ts";
import { AppError } from "../errors/index.ts";
import { queued, type WithFollowUps } from "../queues/follow-ups.ts";
import type { ColdStartStatus } from "../vocabulary/index.ts";
import {
  measurePhase,
  nextColdStart,
  nextReplicaState,
  type OutcomeNow,
  type StoredPhases,
} from "./cold-start-transitions.ts";

/** A telemetry batch as the agent protocol's TelemetryBatch parses it (timestamps as ISO strings). */
export type TelemetryInput = TelemetryBatch;

export interface IngestTelemetryResult {
  /** Events stored by this call. */
  accepted: number;
  /** Events already stored (a resent batch) or repeated within the batch. */
  duplicates: number;
  /** Cold starts this call closed, for history updates and live subscribers. */
  closed: { coldStartId: string; status: ColdStartStatus }[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** How often a replica transition is retried when its stateVersion moved under us. */
const REPLICA_TRANSITION_ATTEMPTS = 3;

/**
 * Stores a node's phase events and advances its cold starts and replicas, all in one
 * transaction. Idempotent on (coldStartId, sequence): a resent batch stores nothing new and,
 * since states are derived from what is stored, changes nothing. A node writes telemetry
 * only for cold starts placed on it; any other id — missing, another node's, another org's —
 * refuses the whole batch with the same NOT_FOUND.
 *
 * What follows: each start it closed goes to `history` (it feeds the predictor, or is retried
 * with the next-best option), and the org's live listeners re-read every start it named.
 */
export async function ingestTelemetry(options: {
  actor: Actor;
  input: TelemetryInput;
  db: DbClient;
}): Promise<WithFollowUps<IngestTelemetryResult>> {
  const result = await storeTelemetry(options);
  const { actor, input } = options;
  const named = [
    ...new Set([...input.events, ...input.outcomes].map((e) => e.coldStartId.toLowerCase())),
  ];
  const closedIds = result.closed.map((c) => c.coldStartId);
  return {
    result,
    followUps: [
      ...closedIds.map((coldStartId) => queued("history", { coldStartId })),
      ...(named.length > 0
        ? [{ live: "cold_starts" as const, orgId: actor.orgId, coldStartIds: named, closedIds }]
        : []),
    ],
  };
}

async function storeTelemetry({
  actor,
  input,
  db,
}: {
  actor: Actor;
  input: TelemetryInput;
  db: DbClient;
}): Promise<IngestTelemetryResult> {
  if (actor.type !== "node") throw new AppError("FORBIDDEN", "Only a node may send telemetry.");
  const events = input.events.map((event, i) => {
    const startedAt = new Date(event.startedAt);
    const endedAt = event.endedAt === undefined ? undefined : new Date(event.endedAt);
    const measured = measurePhase({
      startedAt,
      endedAt,
      seconds: event.seconds,
      bytes: event.bytes,
    });
    if (!measured.ok) {
      const field = `events.${i}.${measured.field}`;
      throw new AppError("BAD_REQUEST", `${field}: ${measured.message}`, { field });
    }
    return {
      coldStartId: event.coldStartId.toLowerCase(),
      sequence: event.sequence,
      phase: event.phase,
      startedAt,
      endedAt: endedAt ?? null,
      seconds: measured.seconds,
      bytes: event.bytes === undefined ? null : BigInt(event.bytes),
      throughputBps: measured.throughputBps,
      attributes: event.attributes,
    };
  });
  // The first outcome reported for a cold start is the one that counts.
  const outcomes = new Map<string, OutcomeNow>();
  for (const o of input.outcomes) {
    const id = o.coldStartId.toLowerCase();
    if (!outcomes.has(id))
      outcomes.set(id, {
        status: o.status,
        failedPhase: o.failedPhase,
        error: o.error,
        endedAt: new Date(o.endedAt),
      });
  }
  const referenced = [
    ...events.map((e, i) => ({ id: e.coldStartId, field: `events.${i}.coldStartId` })),
    ...input.outcomes.map((o, i) => ({
      id: o.coldStartId.toLowerCase(),
      field: `outcomes.${i}.coldStartId`,
    })),
  ];
  if (referenced.length === 0) return { accepted: 0, duplicates: 0, closed: [] };
  const ids = [...new Set(referenced.map((r) => r.id))].sort();

  return db.$transaction(async (tx) => {
    const coldStarts = await lockOwnColdStarts(tx, actor, ids);
    const own = new Set(coldStarts.map((c) => c.id));
    const foreign = referenced.find((r) => !own.has(r.id));
    if (foreign)
      throw new AppError(
        "NOT_FOUND",
        `${foreign.field}: no cold start ${foreign.id} is placed on this node.`,
        { field: foreign.field },
      );

    const { count: accepted } =
      events.length > 0
        ? await tx.phaseEvent.createMany({ data: events, skipDuplicates: true })
        : { count: 0 };

    const stored = await storedPhases(tx, ids);
    const closed: IngestTelemetryResult["closed"] = [];
    for (const coldStart of coldStarts) {
      const change = nextColdStart(
        coldStart,
        stored.get(coldStart.id) ?? EMPTY,
        outcomes.get(coldStart.id),
      );
      if (!change) continue;
      await tx.coldStart.update({ where: { id: coldStart.id }, data: change });
      if (change.status === "succeeded" || change.status === "failed") {
        closed.push({ coldStartId: coldStart.id, status: change.status });
        await moveReplica(tx, actor, coldStart.replicaId, change.status, change.readyAt);
      }
    }
    return { accepted, duplicates: events.length - accepted, closed };
  });
}

const EMPTY: StoredPhases = { count: 0, maxSequence: null, secondsSum: 0, readyAt: null };

/**
 * The actor's cold starts among `ids`, locked for this transaction. Locking first (in id
 * order, so two batches cannot deadlock) serialises concurrent batches for a cold start:
 * the second sees the first's events and derives the same state. Other nodes' and other
 * orgs' rows are filtered out before locking, so a node cannot hold locks on them.
 */
async function lockOwnColdStarts(
  tx: DbTransaction,
  actor: Extract<Actor, { type: "node" }>,
  ids: string[],
) {
  const uuids = ids.filter((id) => UUID.test(id));
  if (uuids.length === 0) return [];
  return tx.$queryRaw<
    { id: string; replicaId: string; status: ColdStartStatus; lastSequence: number }[]
  >`
    SELECT id::text AS id, "replicaId"::text AS "replicaId", status::text AS status, "lastSequence"
    FROM "ColdStart"
    WHERE id = ANY(${uuids}::uuid[])
      AND "orgId" = ${actor.orgId}::uuid
      AND "nodeId" = ${actor.nodeId}::uuid
    ORDER BY id
    FOR UPDATE`;
}

/** What is stored per cold start after this batch's insert (earlier batches included). */
async function storedPhases(tx: DbTransaction, ids: string[]): Promise<Map<string, StoredPhases>> {
  const groups = await tx.phaseEvent.groupBy({
    by: ["coldStartId"],
    where: { coldStartId: { in: ids } },
    _count: { _all: true },
    _max: { sequence: true },
    _sum: { seconds: true },
  });
  const readyMarkers = await tx.phaseEvent.findMany({
    where: { coldStartId: { in: ids }, phase: "ready" },
    orderBy: { sequence: "asc" },
    select: { coldStartId: true, startedAt: true, endedAt: true },
  });
  const result = new Map<string, StoredPhases>();
  for (const g of groups)
    result.set(g.coldStartId, {
      count: g._count._all,
      maxSequence: g._max.sequence,
      secondsSum: g._sum.seconds ?? 0,
      readyAt: null,
    });
  for (const marker of readyMarkers) {
    const summary = result.get(marker.coldStartId);
    if (summary && !summary.readyAt) summary.readyAt = marker.endedAt ?? marker.startedAt;
  }
  return result;
}

/**
 * Moves the cold start's replica to ready or failed with an optimistic check on its
 * stateVersion; if another writer moved it first, re-reads and re-decides (it may now be
 * draining, which we must leave alone). Only the actor's own replica is touched.
 *
 * A failed replica is terminal: the scheduler retries with the next-best option of this
 * cold start (ARCHITECTURE.md §3 step 6) — ingest only records the failure, it never places.
 */
async function moveReplica(
  tx: DbTransaction,
  actor: Extract<Actor, { type: "node" }>,
  replicaId: string,
  coldStartStatus: "succeeded" | "failed",
  readyAt: Date | undefined,
): Promise<void> {
  for (let attempt = 0; attempt < REPLICA_TRANSITION_ATTEMPTS; attempt++) {
    const replica = await tx.replica.findFirst({
      where: { id: replicaId, orgId: actor.orgId, nodeId: actor.nodeId },
      select: { state: true, stateVersion: true },
    });
    if (!replica) return;
    const target = nextReplicaState(coldStartStatus, replica.state);
    if (!target) return;
    const { count } = await tx.replica.updateMany({
      where: { id: replicaId, stateVersion: replica.stateVersion },
      data: {
        state: target,
        stateVersion: { increment: 1 },
        ...(target === "ready" && { readyAt: readyAt ?? new Date() }),
      },
    });
    if (count === 1) return;
  }
  // Rolls the whole batch back; the agent resends it and ingest derives the state again.
  throw new AppError("CONFLICT", `Replica ${replicaId} keeps changing; resend the batch.`);
}
