import { classifyAgentFailure, finishReplicaStop, QUEUES } from "@thaw/core";
import { abandonReplicaSleep, finishReplicaSleep } from "@thaw/core/sleeping";
import { abandonReplicaPark, finishReplicaPark, tendWarmPool } from "@thaw/core/warm-pool";
import { AgentApiError } from "@thaw/node-agent-client";
import type { WorkerContext } from "./worker-context.ts";

/** warm-pool: park, release and pre-warm one endpoint's idle replicas (ARCHITECTURE.md §3 step 7). */
export async function processWarmPool(ctx: WorkerContext, data: unknown): Promise<unknown> {
  const { endpointId } = QUEUES.warmPool.payload.parse(data);
  const result = await tendWarmPool({
    db: ctx.db,
    endpointId,
    options: ctx.warmPool ?? { gpuBudget: 0 },
  });
  const agentOf = async (nodeId: string) => {
    const node = await ctx.db.node.findUnique({
      where: { id: nodeId },
      select: { id: true, agentUrl: true, state: true },
    });
    return node?.agentUrl && node.state !== "terminated"
      ? ctx.agent({ id: node.id, agentUrl: node.agentUrl })
      : null;
  };
  let parked = 0;
  for (const { replicaId, nodeId } of result.toPark) {
    try {
      // Inside: an agent address refused at dial time is a failed park like any other.
      const agent = await agentOf(nodeId);
      if (!agent) throw new Error("its node has no agent to call");
      await agent.parkReplica({ replicaId });
    } catch (error) {
      // The replica is not running there any more: stop it like any drain (reconcile will).
      // The tenant reads a class (the replica's reason); the operator's log has the agent's answer.
      const err = error instanceof Error ? error.message : String(error);
      const failure = error instanceof AgentApiError ? classifyAgentFailure(error, "park") : err;
      await abandonReplicaPark({ db: ctx.db, replicaId, failure });
      ctx.log.warn({ endpointId, replicaId, failure, err }, "park failed");
      continue;
    }
    if (await finishReplicaPark({ db: ctx.db, replicaId })) parked++;
  }
  let slept = 0;
  for (const { replicaId, nodeId, sleepLevel, sleepingBytes, ...calls } of result.toSleep) {
    try {
      const agent = await agentOf(nodeId);
      if (!agent) throw new Error("its node has no agent to call");
      await agent.parkReplica({ replicaId, gpus: "release", sleepLevel, ...calls });
    } catch (error) {
      // Not asleep: it is stopped like any drain (reconcile will), its GPUs freed then.
      const err = error instanceof Error ? error.message : String(error);
      const failure = error instanceof AgentApiError ? classifyAgentFailure(error, "park") : err;
      await abandonReplicaSleep({ db: ctx.db, replicaId, failure });
      ctx.log.warn({ endpointId, replicaId, failure, err }, "sleep failed");
      continue;
    }
    if (await finishReplicaSleep({ db: ctx.db, replicaId, sleepLevel, sleepingBytes })) slept++;
  }
  let stopped = 0;
  for (const { replicaId, nodeId } of result.toStop) {
    const agent = nodeId ? await agentOf(nodeId) : null;
    // Idempotent on the agent: an unknown replica answers found: false.
    if (agent) await agent.stopReplica(replicaId);
    if (await finishReplicaStop({ db: ctx.db, replicaId })) stopped++;
  }
  await ctx.enqueueMany(
    "place",
    result.toPlace.map((replicaId) => ({ replicaId })),
  );
  if (parked + slept + stopped + result.toPlace.length > 0)
    ctx.log.info(
      {
        endpointId,
        parked,
        slept,
        stopped,
        prewarm: result.toPlace.length,
        plan: result.plan?.reason,
      },
      "warm pool",
    );
  return { parked, slept, stopped, prewarm: result.toPlace.length, plan: result.plan };
}
