import { Prisma } from "@thaw/db";
import { z } from "zod";
import {
  type ReplicaDrainIntent,
  type ReplicaPendingCause,
  StartPath,
} from "../vocabulary/index.ts";

// Why a replica is where it is, as data: a cause (Replica.pendingCause) or an intent
// (Replica.drainIntent) that scheduling branches on, and the particulars (Replica.reasonDetail)
// the dashboard's sentence is rendered with. The sentence is display only: rewording one here
// changes no decision, because no decision reads it (replica-reason.test.ts checks the sources).

/** One kind of reason: the particulars it is stored with, and how it reads. */
interface ReasonKind<Detail extends z.ZodType> {
  detail: Detail;
  text(detail: z.infer<Detail>): string;
  /** What is shown when the stored particulars do not parse (a row the backfill could not read). */
  fallback: string;
}

const kind = <Detail extends z.ZodType>(k: ReasonKind<Detail>) => k;
const none = z.object({});
const fixed = (text: string) => kind({ detail: none, text: () => text, fallback: text });

const PENDING_CAUSES = {
  waiting_for_capacity: kind({
    detail: z.union([
      z.object({ gpus: z.number().int(), gpuType: z.string() }),
      z.object({
        infeasible: z.array(z.object({ reason: z.string(), count: z.number().int() })).min(1),
      }),
    ]),
    text: (d) =>
      "infeasible" in d
        ? `no feasible option: ${d.infeasible.map((i) => `${i.reason} (${i.count})`).join("; ")}`
        : `no ready node with ${d.gpus} free ${d.gpuType} GPU${d.gpus === 1 ? "" : "s"}: waiting for capacity`,
    fallback: "waiting for capacity",
  }),
  host_launch_blocked: kind({
    detail: z.object({ gpuModel: z.string(), blockedBy: z.string() }),
    text: (d) => `waiting for a ${d.gpuModel} host: ${d.blockedBy}`,
    fallback: "waiting for a host",
  }),
  start_not_accepted: kind({
    detail: z.object({ path: StartPath, failure: z.string() }),
    text: (d) => `${d.path} start not accepted (${d.failure}); trying the next-best option`,
    fallback: "start not accepted; trying the next-best option",
  }),
  start_failed: kind({
    detail: z.object({ path: StartPath, phase: z.string().nullable() }),
    text: (d) =>
      `${d.path} start failed${d.phase ? ` in ${d.phase}` : ""}; trying the next-best option`,
    fallback: "start failed; trying the next-best option",
  }),
  start_refused: kind({
    detail: z.object({ path: StartPath, failure: z.string() }),
    text: (d) => `${d.path} start refused before it was sent (${d.failure}); given up`,
    fallback: "start refused before it was sent; given up",
  }),
  start_attempts_exhausted: kind({
    detail: z.object({ attempts: z.number().int() }),
    text: (d) => `gave up after ${d.attempts} failed starts`,
    fallback: "gave up after repeated failed starts",
  }),
} satisfies Record<ReplicaPendingCause, ReasonKind<z.ZodType>>;

const DRAIN_INTENTS = {
  scale_down: fixed("scaled down"),
  park_candidate: fixed("scaled down: warm pool may park it"),
  keep_alive_over: fixed("warm pool: keep-alive over"),
  sleep_candidate: fixed("warm pool: keep-alive over, its engine is put to sleep"),
  park_refused: kind({
    detail: z.object({ failure: z.string() }),
    text: (d) => `warm pool: park refused: ${d.failure}`,
    fallback: "warm pool: park refused",
  }),
  node_drained: fixed("node drained"),
  node_lost: fixed("node lost"),
  snapshot_captured: kind({
    detail: z.object({ snapshotId: z.string() }),
    text: (d) => `stopped by the capture of snapshot ${d.snapshotId}`,
    fallback: "stopped by a snapshot capture",
  }),
  vanished_from_node: fixed("parked replica no longer on its node"),
} satisfies Record<ReplicaDrainIntent, ReasonKind<z.ZodType>>;

type Pending = typeof PENDING_CAUSES;
type Drain = typeof DRAIN_INTENTS;

/** The particulars of a kind of reason (none: `object`, so the intent alone is enough). */
type DetailOf<K extends ReasonKind<z.ZodType>> =
  z.infer<K["detail"]> extends Record<string, never> ? object : z.infer<K["detail"]>;

/** A reason as its writer states it: the cause or intent with its particulars. */
export type ReplicaReason =
  | { [C in ReplicaPendingCause]: { pendingCause: C } & DetailOf<Pending[C]> }[ReplicaPendingCause]
  | { [I in ReplicaDrainIntent]: { drainIntent: I } & DetailOf<Drain[I]> }[ReplicaDrainIntent];

/** The reason columns of a Replica row, as read. */
export interface ReplicaReasonColumns {
  pendingCause: ReplicaPendingCause | null;
  drainIntent: ReplicaDrainIntent | null;
  reasonDetail: unknown;
}

/** A text kept by the migration that introduced causes, for a row whose old text it could not read. */
const Note = z.object({ note: z.string() });

/**
 * The sentence the dashboard shows for a replica's reason, or null when it has none. Display
 * only: nothing may branch on it.
 */
export function replicaReasonText(row: ReplicaReasonColumns): string | null {
  const reason: ReasonKind<z.ZodType> | null = row.pendingCause
    ? PENDING_CAUSES[row.pendingCause]
    : row.drainIntent
      ? DRAIN_INTENTS[row.drainIntent]
      : null;
  const parsed = reason?.detail.safeParse(row.reasonDetail);
  if (reason && parsed?.success) return reason.text(parsed.data);
  const note = Note.safeParse(row.reasonDetail);
  if (note.success) return note.data.note;
  return reason?.fallback ?? null;
}

/** The columns to write for a reason (null: none), through Prisma. */
export function replicaReasonData(reason: ReplicaReason | null): {
  pendingCause: ReplicaPendingCause | null;
  drainIntent: ReplicaDrainIntent | null;
  reasonDetail: Prisma.InputJsonObject;
} {
  if (!reason) return { pendingCause: null, drainIntent: null, reasonDetail: {} };
  if ("pendingCause" in reason) {
    const { pendingCause, ...detail } = reason;
    return { pendingCause, drainIntent: null, reasonDetail: detail };
  }
  const { drainIntent, ...detail } = reason;
  return { pendingCause: null, drainIntent, reasonDetail: detail };
}

/** The same columns as a SQL SET list, for writers that update in raw SQL. */
export function replicaReasonSql(reason: ReplicaReason | null): Prisma.Sql {
  const data = replicaReasonData(reason);
  return Prisma.sql`"pendingCause" = ${data.pendingCause}::"ReplicaPendingCause",
    "drainIntent" = ${data.drainIntent}::"ReplicaDrainIntent",
    "reasonDetail" = ${JSON.stringify(data.reasonDetail)}::jsonb`;
}
