import { agentUrlProblem, deriveNodeCredential, NODE_CREDENTIAL_KIND, type Cidr } from "@thaw/core";
import type { WarmPoolOptions } from "@thaw/core/warm-pool";
import type { DbClient } from "@thaw/db";
import { AgentApiError, AgentClient, keepAliveFetch } from "@thaw/node-agent-client";
import type { FleetSetup } from "../fleet/fleet-config.ts";
import type { OfferingAvailability } from "../fleet/offering-availability.ts";
import type { Logger } from "../logger.ts";
import { enqueue, enqueueMany, type SchedulerQueues } from "../queues.ts";

/** What every processor gets: Postgres, the producers, a log, and a way to reach agents. */
export interface WorkerContext {
  db: DbClient;
  queues: SchedulerQueues;
  log: Logger;
  enqueue: <K extends Parameters<typeof enqueue>[1]>(
    key: K,
    payload: Parameters<typeof enqueue<K>>[2],
  ) => Promise<void>;
  /** Several jobs of one queue in one round trip. */
  enqueueMany: <K extends Parameters<typeof enqueue>[1]>(
    key: K,
    payloads: Parameters<typeof enqueueMany<K>>[2],
  ) => Promise<void>;
  agent: (node: { id: string; agentUrl: string }) => AgentClient;
  /** Where hosts come from (THAW_FLEET_CONFIG); absent: the fleet is joined by hand. */
  fleet?: FleetRuntime;
  /** The warm pools' GPU budget and keep-alive settings (absent: no warm pool). */
  warmPool?: WarmPoolOptions;
  /** THAW_SNAPSHOT_REGISTRY: the operator's repository for checkpoints (absent: no snapshots). */
  snapshotStore?: string;
}

export interface FleetRuntime extends FleetSetup {
  availability: OfferingAvailability;
}

/** Agent clients kept per process: more than the largest fleet a scheduler serves. */
const AGENT_CLIENTS_KEPT = 20_000;

export function createWorkerContext(deps: {
  db: DbClient;
  queues: SchedulerQueues;
  log: Logger;
  nodeCredentialSecret: string;
  /** THAW_AGENT_CIDRS: an agent address outside them is never dialled. */
  agentCidrs?: readonly Cidr[];
  /** Agent calls: quick timeouts, and retries are BullMQ's (the job is retried). */
  agentTimeoutMs?: number;
  fleet?: FleetRuntime;
  warmPool?: WarmPoolOptions;
  snapshotStore?: string;
}): WorkerContext {
  // One keep-alive pool for every agent call of the process: a start per cold start.
  const agentFetch = keepAliveFetch();
  const agents = new Map<string, AgentClient>();
  return {
    ...(deps.fleet ? { fleet: deps.fleet } : {}),
    ...(deps.warmPool ? { warmPool: deps.warmPool } : {}),
    ...(deps.snapshotStore ? { snapshotStore: deps.snapshotStore } : {}),
    db: deps.db,
    queues: deps.queues,
    log: deps.log,
    enqueue: (key, payload) => enqueue(deps.queues, key, payload),
    enqueueMany: (key, payloads) => enqueueMany(deps.queues, key, payloads),
    agent: (node) => {
      // A client per node and URL, kept: deriving the node's credential is an HMAC, once
      // per start otherwise. Bounded by clearing, which costs only re-deriving.
      const key = `${node.id} ${node.agentUrl}`;
      let client = agents.get(key);
      if (!client) {
        // Checked again at dial time (the row may predate the join-time check, or the
        // operator's agent networks changed): such a node is refused, not called.
        const problem = agentUrlProblem(node.agentUrl, { agentCidrs: deps.agentCidrs ?? [] });
        if (problem) throw new AgentApiError(421, "agent_address_refused", `agentUrl ${problem}`);
        if (agents.size >= AGENT_CLIENTS_KEPT) agents.clear();
        client = new AgentClient({
          baseUrl: node.agentUrl,
          credential: deriveNodeCredential(
            NODE_CREDENTIAL_KIND,
            deps.nodeCredentialSecret,
            node.id,
          ),
          timeoutMs: deps.agentTimeoutMs ?? 10_000,
          retries: 1,
          fetchImpl: agentFetch,
        });
        agents.set(key, client);
      }
      return client;
    },
  };
}
