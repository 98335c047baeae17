import { directSql, Prisma, type DbClient, type SqlTransaction } from "@thaw/db";
import type { TelemetryBatch } from "@thaw/protocol";
import type { Actor } from "../auth/index.ts";
import { AppError } from "../errors/index.ts";
import { queued, type WithFollowUps } from "../queues/follow-ups.ts";
import { uuidV7 } from "../placement/uuid-v7.ts";
import type { ColdStartStatus, Phase, ReplicaState } from "../vocabulary/index.ts";
import {
  measurePhase,
  type ColdStartChange,
  nextColdStart,
  nextReplicaState,
  type OutcomeNow,
  type StoredPhases,
} from "./cold-start-transitions.ts";

/**
 * A telemetry batch as the agent protocol's TelemetryBatch parses it (timestamps as ISO
 * strings); `kernelCaches` may be left out by callers that report none.
 */
export type TelemetryInput = Omit<TelemetryBatch, "kernelCaches"> &
  Partial<Pick<TelemetryBatch, "kernelCaches">>;

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
  const [outcome] = await ingestTelemetryGroup({ submissions: [options], db: options.db });
  if (!outcome!.ok) throw outcome!.error;
  return outcome!.value;
}

/** One node's batch among a group (ingestTelemetryGroup). */
export interface TelemetrySubmission {
  actor: Actor;
  input: TelemetryInput;
}

/** What became of one submission: its answer, or the error it alone would have raised. */
export type TelemetryOutcome =
  { ok: true; value: WithFollowUps<IngestTelemetryResult> } | { ok: false; error: unknown };

/**
 * Several nodes' batches in one transaction (group commit), each answered as ingestTelemetry
 * would have answered it alone: a web process that has many agents' batches waiting stores
 * them with one lock, one insert, one aggregate and one update instead of a transaction each
 * (per batch that was ~1.5 ms of Postgres CPU and ~7 round trips; bench:ingest). A batch that
 * names a cold start not placed on its node is refused alone; if the group's transaction
 * fails for any other reason, each batch is retried alone, so one batch cannot fail another.
 */
export async function ingestTelemetryGroup({
  submissions,
  db,
}: {
  submissions: TelemetrySubmission[];
  db: DbClient;
}): Promise<TelemetryOutcome[]> {
  const outcomes: (TelemetryOutcome | undefined)[] = submissions.map(() => undefined);
  const pending: { index: number; batch: PreparedBatch }[] = [];
  submissions.forEach((submission, index) => {
    try {
      const batch = prepareBatch(submission);
      if (batch.ids.length === 0) outcomes[index] = answered(batch, NOTHING_STORED);
      else pending.push({ index, batch });
    } catch (error) {
      outcomes[index] = { ok: false, error };
    }
  });
  const store = async (group: typeof pending) => {
    const stored = await storeBatches(
      group.map((p) => p.batch),
      db,
    );
    group.forEach(({ index, batch }, i) => {
      const result = stored[i]!;
      outcomes[index] =
        result instanceof AppError ? { ok: false, error: result } : answered(batch, result);
    });
  };
  if (pending.length > 0) {
    try {
      await store(pending);
    } catch (error) {
      if (pending.length === 1) outcomes[pending[0]!.index] = { ok: false, error };
      else
        for (const one of pending) {
          try {
            await store([one]);
          } catch (alone) {
            outcomes[one.index] = { ok: false, error: alone };
          }
        }
    }
  }
  return outcomes.map((o) => o!);
}

const NOTHING_STORED: IngestTelemetryResult = { accepted: 0, duplicates: 0, closed: [] };

/** A batch's answer and what follows from it. */
function answered(batch: PreparedBatch, result: IngestTelemetryResult): TelemetryOutcome {
  const closedIds = result.closed.map((c) => c.coldStartId);
  return {
    ok: true,
    value: {
      result,
      followUps: [
        ...closedIds.map((coldStartId) => queued("history", { coldStartId })),
        ...(batch.ids.length > 0
          ? [
              {
                live: "cold_starts" as const,
                orgId: batch.actor.orgId,
                coldStartIds: batch.named,
                closedIds,
              },
            ]
          : []),
      ],
    },
  };
}

/** A batch checked and put in the shape it is stored in. */
interface PreparedBatch {
  actor: Extract<Actor, { type: "node" }>;
  events: PhaseEventRow[];
  /** The first outcome reported for a cold start is the one that counts. */
  outcomes: Map<string, OutcomeNow>;
  /** Kernel caches the node captured (KernelCacheCapturedReport), each for one of its starts. */
  kernelCaches: CapturedKernelCache[];
  /** Every cold start id the batch names, with the field that names it first. */
  referenced: { id: string; field: string }[];
  /** The ids it names, sorted, deduplicated; and in the order it first names them. */
  ids: string[];
  named: string[];
}

function prepareBatch({ actor, input }: TelemetrySubmission): PreparedBatch {
  if (actor.type !== "node") throw new AppError("FORBIDDEN", "Only a node may send telemetry.");
  const events = input.events.map((event, i): PhaseEventRow => {
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
  const kernelCaches = (input.kernelCaches ?? []).map((k): CapturedKernelCache => ({
    id: k.kernelCacheId.toLowerCase(),
    coldStartId: k.coldStartId.toLowerCase(),
    orgId: actor.orgId,
    nodeId: actor.nodeId,
    digest: k.digest,
    bytes: k.bytes,
  }));
  const referenced = [
    ...events.map((e, i) => ({ id: e.coldStartId, field: `events.${i}.coldStartId` })),
    ...input.outcomes.map((o, i) => ({
      id: o.coldStartId.toLowerCase(),
      field: `outcomes.${i}.coldStartId`,
    })),
    ...kernelCaches.map((k, i) => ({ id: k.coldStartId, field: `kernelCaches.${i}.coldStartId` })),
  ];
  const named = [...new Set(referenced.map((r) => r.id))];
  return { actor, events, outcomes, kernelCaches, referenced, ids: [...named].sort(), named };
}

/**
 * The batches' events stored and their cold starts and replicas advanced, in one transaction
 * of a few statements on node-postgres (the hot-path client, @thaw/db's direct-sql.ts):
 * through Prisma's query layer each of the ~10 statements a batch took cost about a
 * millisecond of the web process's CPU. Per batch: its result, or the NOT_FOUND that
 * refuses it (nothing of it is stored). Throws for anything else, rolling the group back.
 */
async function storeBatches(
  batches: PreparedBatch[],
  db: DbClient,
): Promise<(IngestTelemetryResult | AppError)[]> {
  return directSql(db).transaction(async (tx) => {
    const locked = await lockOwnColdStarts(tx, batches);
    const answers: (IngestTelemetryResult | AppError | undefined)[] = batches.map(() => undefined);
    const admitted: number[] = [];
    batches.forEach((batch, b) => {
      const isOwn = (id: string) => {
        const row = locked.get(id);
        return row?.nodeId === batch.actor.nodeId && row.orgId === batch.actor.orgId;
      };
      const foreign = batch.referenced.find((r) => !isOwn(r.id));
      if (foreign)
        answers[b] = new AppError(
          "NOT_FOUND",
          `${foreign.field}: no cold start ${foreign.id} is placed on this node.`,
          { field: foreign.field },
        );
      else admitted.push(b);
    });

    // Each stored row counts for the first admitted batch that carries it; a resent or
    // repeated event is a duplicate of whichever batch carries it.
    const events = admitted.flatMap((b) => batches[b]!.events);
    const inserted =
      events.length > 0 ? await tx.rows<{ key: string }>(insertPhaseEvents(events)) : [];
    const fresh = new Set(inserted.map((r) => r.key));
    const accepted = new Map<number, number>();
    for (const b of admitted) {
      let count = 0;
      for (const e of batches[b]!.events) {
        const key = `${e.coldStartId}/${e.sequence}`;
        if (fresh.delete(key)) count++;
      }
      accepted.set(b, count);
    }

    // Per cold start, the first admitted batch naming it (which answers for its closing) and
    // the first outcome reported for it, in one pass over the group.
    const firstNaming = new Map<string, number>();
    const firstOutcome = new Map<string, OutcomeNow>();
    for (const b of admitted) {
      for (const id of batches[b]!.ids) if (!firstNaming.has(id)) firstNaming.set(id, b);
      for (const [id, outcome] of batches[b]!.outcomes)
        if (!firstOutcome.has(id)) firstOutcome.set(id, outcome);
    }
    const ids = [...firstNaming.keys()].sort();
    const stored = await storedPhases(tx, ids);
    const closedBy = new Map<number, IngestTelemetryResult["closed"]>();
    const changes: { id: string; change: ColdStartChange }[] = [];
    const moves: ReplicaMove[] = [];
    for (const id of ids) {
      const coldStart = locked.get(id)!;
      const first = firstNaming.get(id)!;
      const change = nextColdStart(coldStart, stored.get(id) ?? EMPTY, firstOutcome.get(id));
      if (!change) continue;
      changes.push({ id, change });
      if (change.status === "succeeded" || change.status === "failed") {
        const closed = closedBy.get(first) ?? [];
        closed.push({ coldStartId: id, status: change.status });
        closedBy.set(first, closed);
        moves.push({
          actor: batches[first]!.actor,
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
    for (const move of moves) await moveReplica(tx, move);
    const captured = admitted.flatMap((b) => batches[b]!.kernelCaches);
    if (captured.length > 0) await tx.execute(recordCapturedKernelCaches(captured));
    for (const b of admitted) {
      const count = accepted.get(b)!;
      answers[b] = {
        accepted: count,
        duplicates: batches[b]!.events.length - count,
        closed: closedBy.get(b) ?? [],
      };
    }
    return answers.map((a) => a!);
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
 * UUIDv7, as Prisma's @default(uuid(7)) and placement make them.
 */
function insertPhaseEvents(events: PhaseEventRow[]): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO "PhaseEvent"
      (id, "coldStartId", sequence, phase, "startedAt", "endedAt", seconds, bytes,
       "throughputBps", attributes)
    SELECT e.id, e.cold_start_id, e.sequence, e.phase, e.started_at, e.ended_at, e.seconds,
           e.bytes, e.throughput_bps, e.attributes
    FROM UNNEST(
      ${events.map(() => uuidV7())}::uuid[],
      ${events.map((e) => e.coldStartId)}::uuid[],
      ${events.map((e) => e.sequence)}::int[],
      ${events.map((e) => e.phase)}::"Phase"[],
      ${events.map((e) => utc(e.startedAt))}::timestamp(3)[],
      ${events.map((e) => utc(e.endedAt))}::timestamp(3)[],
      ${events.map((e) => e.seconds)}::float8[],
      ${events.map((e) => (e.bytes === null ? null : e.bytes.toString()))}::bigint[],
      ${events.map((e) => e.throughputBps)}::float8[],
      ${events.map((e) => JSON.stringify(e.attributes))}::jsonb[]
    ) AS e(id, cold_start_id, sequence, phase, started_at, ended_at, seconds, bytes,
           throughput_bps, attributes)
    ON CONFLICT ("coldStartId", sequence) DO NOTHING
    RETURNING "coldStartId"::text || '/' || sequence AS key`;
}

/** A kernel cache a node reports captured, for one of its own cold starts. */
interface CapturedKernelCache {
  id: string;
  coldStartId: string;
  orgId: string;
  nodeId: string;
  digest: string;
  bytes: number;
}

/**
 * The reported caches become the deployments' stored ones: only a claim still `capturing`
 * for that same start (claimKernelCacheCapture) is completed, so a resent report, or a late
 * one from a start whose claim another start has taken over, changes nothing.
 */
function recordCapturedKernelCaches(captured: CapturedKernelCache[]): Prisma.Sql {
  return Prisma.sql`
    UPDATE "KernelCache" k
    SET status = 'ready', digest = r.digest, bytes = r.bytes, "sourceNodeId" = r.node_id,
      "updatedAt" = now()
    FROM UNNEST(
      ${captured.map((k) => k.id)}::uuid[],
      ${captured.map((k) => k.coldStartId)}::uuid[],
      ${captured.map((k) => k.orgId)}::uuid[],
      ${captured.map((k) => k.nodeId)}::uuid[],
      ${captured.map((k) => k.digest)}::text[],
      ${captured.map((k) => String(k.bytes))}::bigint[]
    ) AS r(id, cold_start_id, org_id, node_id, digest, bytes)
    WHERE k.id = r.id AND k."orgId" = r.org_id AND k."coldStartId" = r.cold_start_id
      AND k.status = 'capturing'`;
}

interface LockedColdStart {
  id: string;
  orgId: string;
  nodeId: string;
  replicaId: string;
  status: ColdStartStatus;
  lastSequence: number;
  /** The replica as it was when the cold start was locked; null when it is not the node's. */
  replicaState: ReplicaState | null;
  replicaStateVersion: number | null;
}

/**
 * The cold starts the batches name that are placed on the naming batch's node, locked for
 * this transaction, with their replicas' states. Locking first (in id order, so two groups
 * cannot deadlock) serialises concurrent batches for a cold start: the second sees the
 * first's events and derives the same state. Other nodes' and other orgs' rows are filtered
 * out before locking, so a node cannot hold locks on them. The replica is read, not locked:
 * its move is checked on stateVersion.
 */
async function lockOwnColdStarts(
  tx: SqlTransaction,
  batches: PreparedBatch[],
): Promise<Map<string, LockedColdStart>> {
  const keys = new Map<string, { id: string; orgId: string; nodeId: string }>();
  for (const { actor, ids } of batches)
    for (const id of ids)
      if (UUID.test(id))
        keys.set(`${id}/${actor.orgId}/${actor.nodeId}`, {
          id,
          orgId: actor.orgId,
          nodeId: actor.nodeId,
        });
  if (keys.size === 0) return new Map();
  const wanted = [...keys.values()];
  const rows = await tx.rows<LockedColdStart>(Prisma.sql`
    SELECT c.id::text AS id, c."orgId"::text AS "orgId", c."nodeId"::text AS "nodeId",
           c."replicaId"::text AS "replicaId", c.status::text AS status, c."lastSequence",
           r.state::text AS "replicaState", r."stateVersion" AS "replicaStateVersion"
    FROM "ColdStart" c
    JOIN UNNEST(
      ${wanted.map((k) => k.id)}::uuid[],
      ${wanted.map((k) => k.orgId)}::uuid[],
      ${wanted.map((k) => k.nodeId)}::uuid[]
    ) AS k(id, org_id, node_id)
      ON c.id = k.id AND c."orgId" = k.org_id AND c."nodeId" = k.node_id
    LEFT JOIN "Replica" r
      ON r.id = c."replicaId" AND r."orgId" = c."orgId" AND r."nodeId" = c."nodeId"
    ORDER BY c.id
    FOR UPDATE OF c`);
  return new Map(rows.map((row) => [row.id, row]));
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
  /** The node whose batch closed the start: only its own replica is touched. */
  actor: Extract<Actor, { type: "node" }>;
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
async function moveReplica(tx: SqlTransaction, move: ReplicaMove): Promise<void> {
  const { actor } = move;
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
