import { createJoinToken, type Actor } from "@thaw/core";
import type { DbClient } from "@thaw/db";
import { seedDemo } from "@thaw/db/seed";
import { loadEnv, type SchedulerEnv } from "../env.ts";
import { createQueues, enqueue, type SchedulerQueues } from "../queues.ts";
import { createProducerConnection } from "../redis.ts";
import { TEST_AGENT_CALL_KEYS } from "./agent-call-keys.ts";
import { startAgentApiServer, type AgentApiServer } from "./agent-api-server.ts";
import { startSimAgent, type SimAgentProcess } from "./sim-agent-process.ts";

// What the scheduler's end-to-end tests stand on: the demo seed, BullMQ producers under the
// test's prefix, the control plane's agent API on the test database, and a real sim agent
// process whose `hosts` g5.xlarge hosts have joined and are ready.

/**
 * A scheduler's environment for one test file: its own database, the shared Redis under the
 * file's own BullMQ prefix, quiet logs; `extra` for the settings a test is about.
 */
/** The operator's snapshot store the test schedulers capture into (sim agents honour any). */
export const TEST_SNAPSHOT_STORE = "snapshots.sim.thaw.test/thaw-snapshots";

export function schedulerTestEnv(o: {
  databaseUrl: string;
  prefix: string;
  extra?: Record<string, string>;
}): SchedulerEnv {
  return loadEnv({
    DATABASE_URL: o.databaseUrl,
    REDIS_URL: process.env.REDIS_URL,
    THAW_QUEUE_PREFIX: o.prefix,
    THAW_AGENT_CALL_KEY: TEST_AGENT_CALL_KEYS.privateKey,
    THAW_SNAPSHOT_REGISTRY: TEST_SNAPSHOT_STORE,
    LOG_LEVEL: "error",
    ...o.extra,
  });
}

export interface SchedulerTestStack {
  orgId: string;
  /** llama-3-2-1b-gguf: one A10G per replica. */
  endpointId: string;
  producer: ReturnType<typeof createProducerConnection>;
  queues: SchedulerQueues;
  api: AgentApiServer;
  agent: SimAgentProcess;
  close(): Promise<void>;
}

export async function startSchedulerTestStack(o: {
  db: DbClient;
  prefix: string;
  hosts: number;
  agentPrefix: string;
  agentEnv: Record<string, string>;
}): Promise<SchedulerTestStack> {
  const { orgId, userId } = await seedDemo(o.db);
  const owner: Actor = { type: "user", userId, orgId, role: "owner" };
  const endpointId = (
    await o.db.endpoint.findFirstOrThrow({ where: { orgId, slug: "llama-3-2-1b-gguf" } })
  ).id;
  const producer = createProducerConnection(process.env.REDIS_URL!);
  await producer.connect();
  const queues = createQueues(producer, o.prefix);
  const api = await startAgentApiServer({
    db: o.db,
    onClosed: (coldStartId) => enqueue(queues, "history", { coldStartId }),
  });
  const tokens: string[] = [];
  for (let i = 0; i < o.hosts; i++)
    tokens.push(
      (await createJoinToken({ actor: owner, input: { ttlSeconds: 600 }, db: o.db })).token,
    );
  const agent = startSimAgent({
    controlPlaneUrl: api.url,
    joinTokens: tokens,
    hosts: o.hosts > 0 ? `g5.xlarge:${o.hosts}` : "",
    prefix: o.agentPrefix,
    env: o.agentEnv,
  });
  for (let waited = 0; (await o.db.node.count({ where: { state: "ready" } })) < o.hosts;) {
    if ((waited += 100) > 45_000) throw new Error(`the sim hosts did not join\n${agent.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    orgId,
    endpointId,
    producer,
    queues,
    api,
    agent,
    async close() {
      await agent.stop();
      await api.close();
      await Promise.all(Object.values(queues).map((q) => q.close()));
      producer.disconnect();
    },
  };
}
