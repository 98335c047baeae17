import type { WithFollowUps } from "@thaw/core";
import { publishColdStartProgress } from "./live/live-events.ts";
import { enqueue } from "./queue-producer.ts";

/**
 * The one place a transport (REST, tRPC, the agent API) acts on what a use case returned:
 * each follow-up in order — a job on its queue, or a live notice to the org's listeners —
 * then the answer. Neither step fails the call: the change is committed, and the scheduler's
 * sweep and the clients' next read catch up with anything lost.
 */
export async function followThrough<T>(outcome: WithFollowUps<T>): Promise<T> {
  for (const work of outcome.followUps) {
    if ("queue" in work) await enqueue(work.queue, work.payload);
    else
      await publishColdStartProgress(work.orgId, {
        coldStartIds: work.coldStartIds,
        closedIds: work.closedIds,
      });
  }
  return outcome.result;
}
