import { directSql, Prisma, type DbClient, type SqlTransaction } from "@thaw/db";
import type { TelemetryBatch } from "@thaw/protocol";
import type { Actor } from "../auth/index.ts";
import { AppError } from "../errors/index.ts";
import { queued, type WithFollowUps } from "../queues/follow-ups.ts";
import type { ColdStartStatus, Phase, ReplicaState } from "../vocabulary/index.ts";
import {
  measurePhase,
  type ColdStartChange,
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

  // The whole batch in one transaction of a few statements on node-postgres (the hot-path
  // client, @thaw/db's direct-sql.ts): a fleet's agents send thousands of these a second,
  // and through Prisma's query layer each of the ~10 statements it took cost about a
  // millisecond of the web process's CPU (bench:ingest).
  return directSql(db).transaction(async (tx) => {
    const coldStarts = await lockOwnColdStarts(tx, actor, ids);
    const own = new Set(coldStarts.map((c) => c.id));
    const foreign = referenced.find((r) => !own.has(r.id));
    if (foreign)
      throw new AppError(
        "NOT_FOUND",
        `${foreign.field}: no cold start ${foreign.id} is placed on this node.`,
        { field: foreign.field },
      );

    const accepted = events.length > 0 ? await tx.execute(insertPhaseEvents(events)) : 0;

    const stored = await storedPhases(tx, ids);
    const changes: { id: string; change: ColdStartChange }[] = [];
    const closed: IngestTelemetryResult["closed"] = [];
    const moves: ReplicaMove[] = [];
    for (const coldStart of coldStarts) {
      const change = nextColdStart(
        coldStart,
        stored.get(coldStart.id) ?? EMPTY,
        outcomes.get(coldStart.id),
      );
      if (!change) continue;
      changes.push({ id: coldStart.id, change });
      if (change.status === "succeeded" || change.status === "failed") {
        closed.push({ coldStartId: coldStart.id, status: change.status });
        moves.push({
          replicaId: coldStart.replicaId,
          coldStartStatus: change.status,
          readyAt: change.readyAt,
          seen:
            coldStart.replicaState === null
              ? null
              : { state: coldStart.replicaState, stateVersion: coldStart.replicaStateVersion! },
        });
      }
    }
    if (changes.length > 0) await tx.execute(updateColdStarts(changes));
    // In cold-start id order, as they were locked; a later move of the same replica finds the
    // version moved by the earlier one and re-reads.
    for (const move of moves) await moveReplica(tx, actor, move);
    return { accepted, duplicates: events.length - accepted, closed };
  });
}

const EMPTY: StoredPhases = { count: 0, maxSequence: null, secondsSum: 0, readyAt: null };

/** A phase event as stored: the report with its figures derived (measurePhase). */
interface PhaseEventRow {
  coldStartId: string;
  sequence: number;
  phase: Phase;
  startedAt: Date;
  endedAt: Date | null;
  seconds: number | null;
  bytes: bigint | null;
  throughputBps: number | null;
  attributes: Record<string, string | number | boolean>;
}

// Timestamps go as UTC wall time (what Prisma writes to `timestamp` columns); node-postgres
// would render a Date inside an array in the process's local time.
const utc = (at: Date | null | undefined) => (at ? at.toISOString() : null);

/**
 * One INSERT for the batch, idempotent on (coldStartId, sequence) like createMany's
 * skipDuplicates: a resent event, or one repeated within the batch, is skipped. Ids are
 * UUIDv7 as Prisma's @default(uuid(7)) makes them (Postgres 15 has no uuidv7()): the
 * millisecond clock over a random v4's first six bytes, version bits set to 7.
 */
function insertPhaseEvents(events: PhaseEventRow[]): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO "PhaseEvent"
      (id, "coldStartId", sequence, phase, "startedAt", "endedAt", seconds, bytes,
       "throughputBps", attributes)
    SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) PLACING
             substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint)
             FROM 3) FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid,
           e.cold_start_id, e.sequence, e.phase, e.started_at, e.ended_at, e.seconds, e.bytes,
           e.throughput_bps, e.attributes
    FROM UNNEST(
      ${events.map((e) => e.coldStartId)}::uuid[],
      ${events.map((e) => e.sequence)}::int[],
      ${events.map((e) => e.phase)}::"Phase"[],
      ${events.map((e) => utc(e.startedAt))}::timestamp(3)[],
      ${events.map((e) => utc(e.endedAt))}::timestamp(3)[],
      ${events.map((e) => e.seconds)}::float8[],
      ${events.map((e) => (e.bytes === null ? null : e.bytes.toString()))}::bigint[],
      ${events.map((e) => e.throughputBps)}::float8[],
      ${events.map((e) => JSON.stringify(e.attributes))}::jsonb[]
    ) AS e(cold_start_id, sequence, phase, started_at, ended_at, seconds, bytes,
           throughput_bps, attributes)
    ON CONFLICT ("coldStartId", sequence) DO NOTHING`;
}

interface LockedColdStart {
  id: string;
  replicaId: string;
  status: ColdStartStatus;
  lastSequence: number;
  /** The replica as it was when the cold start was locked; null when it is not the node's. */
  replicaState: ReplicaState | null;
  replicaStateVersion: number | null;
}

/**
 * The actor's cold starts among `ids`, locked for this transaction, with their replicas'
 * states. Locking first (in id order, so two batches cannot deadlock) serialises concurrent
 * batches for a cold start: the second sees the first's events and derives the same state.
 * Other nodes' and other orgs' rows are filtered out before locking, so a node cannot hold
 * locks on them. The replica is read, not locked: its move is checked on stateVersion.
 */
async function lockOwnColdStarts(
  tx: SqlTransaction,
  actor: Extract<Actor, { type: "node" }>,
  ids: string[],
): Promise<LockedColdStart[]> {
  const uuids = ids.filter((id) => UUID.test(id));
  if (uuids.length === 0) return [];
  return tx.rows<LockedColdStart>(Prisma.sql`
    SELECT c.id::text AS id, c."replicaId"::text AS "replicaId", c.status::text AS status,
           c."lastSequence", r.state::text AS "replicaState", r."stateVersion" AS "replicaStateVersion"
    FROM "ColdStart" c
    LEFT JOIN "Replica" r
      ON r.id = c."replicaId" AND r."orgId" = c."orgId" AND r."nodeId" = c."nodeId"
    WHERE c.id = ANY(${uuids}::uuid[])
      AND c."orgId" = ${actor.orgId}::uuid
      AND c."nodeId" = ${actor.nodeId}::uuid
    ORDER BY c.id
    FOR UPDATE OF c`);
}

/** What is stored per cold start after this batch's insert (earlier batches included). */
async function storedPhases(tx: SqlTransaction, ids: string[]): Promise<Map<string, StoredPhases>> {
  const rows = await tx.rows<StoredPhases & { coldStartId: string }>(Prisma.sql`
    SELECT "coldStartId"::text AS "coldStartId", count(*)::int AS count,
           max(sequence) AS "maxSequence", coalesce(sum(seconds), 0)::float8 AS "secondsSum",
           (array_agg(coalesce("endedAt", "startedAt") ORDER BY sequence)
              FILTER (WHERE phase = 'ready'))[1] AS "readyAt"
    FROM "PhaseEvent"
    WHERE "coldStartId" = ANY(${ids.filter((id) => UUID.test(id))}::uuid[])
    GROUP BY "coldStartId"`);
  return new Map(rows.map(({ coldStartId, ...summary }) => [coldStartId, summary]));
}

/**
 * Every changed cold start in one UPDATE. A field the change leaves out keeps its value;
 * the `set_*` flags tell a field set to null (a failure without an error text) from one
 * left alone.
 */
function updateColdStarts(changes: { id: string; change: ColdStartChange }[]): Prisma.Sql {
  const column = <K extends keyof ColdStartChange>(key: K) => changes.map((c) => c.change[key]);
  const has = (key: keyof ColdStartChange) => changes.map((c) => key in c.change);
  return Prisma.sql`
    UPDATE "ColdStart" AS c SET
      status = coalesce(v.status, c.status),
      "lastSequence" = coalesce(v.last_sequence, c."lastSequence"),
      "readyAt" = coalesce(v.ready_at, c."readyAt"),
      "finishedAt" = coalesce(v.finished_at, c."finishedAt"),
      "actualSeconds" = CASE WHEN v.set_actual THEN v.actual_seconds ELSE c."actualSeconds" END,
      "failedPhase" = CASE WHEN v.set_failed_phase THEN v.failed_phase ELSE c."failedPhase" END,
      error = CASE WHEN v.set_error THEN v.error ELSE c.error END
    FROM UNNEST(
      ${changes.map((c) => c.id)}::uuid[],
      ${column("status").map((x) => x ?? null)}::"ColdStartStatus"[],
      ${column("lastSequence").map((x) => x ?? null)}::int[],
      ${column("readyAt").map(utc)}::timestamp(3)[],
      ${column("finishedAt").map(utc)}::timestamp(3)[],
      ${has("actualSeconds")}::bool[],
      ${column("actualSeconds").map((x) => x ?? null)}::float8[],
      ${has("failedPhase")}::bool[],
      ${column("failedPhase").map((x) => x ?? null)}::"Phase"[],
      ${has("error")}::bool[],
      ${column("error").map((x) => x ?? null)}::text[]
    ) AS v(id, status, last_sequence, ready_at, finished_at, set_actual, actual_seconds,
           set_failed_phase, failed_phase, set_error, error)
    WHERE c.id = v.id`;
}

interface ReplicaMove {
  replicaId: string;
  coldStartStatus: "succeeded" | "failed";
  readyAt: Date | undefined;
  /** The replica when its cold start was locked; null when it is not the node's. */
  seen: { state: ReplicaState; stateVersion: number } | null;
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
  tx: SqlTransaction,
  actor: Extract<Actor, { type: "node" }>,
  move: ReplicaMove,
): Promise<void> {
  let replica = move.seen;
  for (let attempt = 0; attempt < REPLICA_TRANSITION_ATTEMPTS; attempt++) {
    if (!replica) return;
    const target = nextReplicaState(move.coldStartStatus, replica.state);
    if (!target) return;
    const now = new Date();
    const moved = await tx.execute(Prisma.sql`
      UPDATE "Replica"
      SET state = ${target}::"ReplicaState", "stateVersion" = "stateVersion" + 1,
          "readyAt" = CASE WHEN ${target} = 'ready' THEN ${move.readyAt ?? now}::timestamp(3)
                           ELSE "readyAt" END,
          "updatedAt" = ${now}::timestamp(3)
      WHERE id = ${move.replicaId}::uuid AND "stateVersion" = ${replica.stateVersion}
        AND "orgId" = ${actor.orgId}::uuid AND "nodeId" = ${actor.nodeId}::uuid`);
    if (moved === 1) return;
    [replica = null] = await tx.rows<{ state: ReplicaState; stateVersion: number }>(Prisma.sql`
      SELECT state::text AS state, "stateVersion" FROM "Replica"
      WHERE id = ${move.replicaId}::uuid
        AND "orgId" = ${actor.orgId}::uuid AND "nodeId" = ${actor.nodeId}::uuid`);
  }
  // Rolls the whole batch back; the agent resends it and ingest derives the state again.
  throw new AppError("CONFLICT", `Replica ${move.replicaId} keeps changing; resend the batch.`);
}
