import {
  afterSweepSlice,
  countSweptEndpoints,
  findSweepSlice,
  nextSweepSlice,
  SWEEP_SLICES_PER_TICK,
  SWEEP_WALK_START,
  sweepSliceEndpoints,
  SweepWalkState,
} from "@thaw/core";
import type { DbClient } from "@thaw/db";
import type { Redis } from "ioredis";
import { enqueue, type SchedulerQueues } from "../queues.ts";

/**
 * One tick of the sweep's walk round the endpoints (core's nextSweepSlice): whichever
 * scheduler takes the tick's lock reads the shared walk from Redis, queues the next slice's
 * reconciles and warm-pool tendings as one job on the sweep's own queue, and moves the walk on.
 * Returns the endpoints queued.
 */
export async function takeSweepSlice(args: {
  db: DbClient;
  redis: Redis;
  queues: SchedulerQueues;
  prefix: string;
  instanceId: string;
  sweepMs: number;
}): Promise<number> {
  const { db, redis, queues, prefix, sweepMs } = args;
  const walkKey = `${prefix}:sweep-walk`;
  // One scheduler a tick: the lock outlives none of the next tick's.
  const tickMs = sweepMs / SWEEP_SLICES_PER_TICK;
  const locked = await redis.set(
    `${walkKey}:tick`,
    args.instanceId,
    "PX",
    Math.max(1, Math.floor(tickMs * 0.9)),
    "NX",
  );
  if (locked !== "OK") return 0;
  const state = storedWalk(await redis.get(walkKey));
  const slice = nextSweepSlice(state, Date.now(), sweepMs);
  if (!slice) return 0;
  // While an earlier slice's jobs still wait for the sweep's few workers, no more are added:
  // the sweep never piles up behind itself.
  if ((await queues.sweep.getWaitingCount()) > 0) return 0;
  // A round's slices are sized when it begins: its endpoints spread over the period.
  const limit =
    slice.after === null
      ? sweepSliceEndpoints(await countSweptEndpoints({ db }))
      : state.sliceEndpoints;
  const found = await findSweepSlice({ db, after: slice.after, limit });
  await redis.set(
    walkKey,
    JSON.stringify(afterSweepSlice(state, slice, found.nextAfter, Date.now(), limit)),
  );
  if (found.endpointIds.length === 0) return 0;
  // The slice's reconciles and warm-pool tendings (the warm pool's clock: keep-alives run out
  // and pre-warms fall due between changes) as one job on the sweep's own queue and workers
  // (QUEUES.sweep).
  await enqueue(queues, "sweep", { endpointIds: found.endpointIds });
  return found.endpointIds.length;
}

/** The stored walk; a missing or unreadable one starts a round (it only costs a repeat). */
function storedWalk(stored: string | null): SweepWalkState {
  if (stored === null) return SWEEP_WALK_START;
  try {
    const parsed = SweepWalkState.safeParse(JSON.parse(stored));
    return parsed.success ? parsed.data : SWEEP_WALK_START;
  } catch {
    return SWEEP_WALK_START;
  }
}
