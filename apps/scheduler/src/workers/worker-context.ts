import type { KeyObject } from "node:crypto";
import { agentUrlProblem, type Cidr, type WebhookConfig } from "@thaw/core";
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
  /**
   * `certSha256`: the node's pin as just read with the call's other data (dispatch reads it
   * with the start); without it the pin is read from the node's row, at most every 5 s.
   */
  agent: (node: { id: string; agentUrl: string; certSha256?: string | null }) => AgentClient;
  /** Where hosts come from (THAW_FLEET_CONFIG); absent: the fleet is joined by hand. */
  fleet?: FleetRuntime;
  /** The warm pools' GPU budget and keep-alive settings (absent: no warm pool). */
  warmPool?: WarmPoolOptions;
  /** THAW_SNAPSHOT_REGISTRY: the operator's repository for checkpoints (absent: no snapshots). */
  snapshotStore?: string;
  /** THAW_CREDENTIALS_KEY (+ THAW_ECR_ENDPOINT): opens orgs' registry credentials at dispatch. */
  registryCredentials?: RegistryCredentialAccess;
  /** THAW_CREDENTIALS_KEY (webhook secrets are sealed with it) and THAW_WEBHOOK_TRUSTED_HOSTS. */
  webhooks?: WebhookConfig;
}

export interface RegistryCredentialAccess {
  sealingKey: Buffer;
  ecrEndpoint?: string;
}

export interface FleetRuntime extends FleetSetup {
  availability: OfferingAvailability;
}

/** Agent clients kept per process: more than the largest fleet a scheduler serves. */
const AGENT_CLIENTS_KEPT = 20_000;
/** How long a node's pinned certificate is taken as read: it changes only when the node joins again. */
const PIN_TTL_MS = 5_000;

export function createWorkerContext(deps: {
  db: DbClient;
  queues: SchedulerQueues;
  log: Logger;
  /** THAW_AGENT_CALL_KEY: every agent call is signed with it. */
  agentCallKey: KeyObject;
  /** THAW_AGENT_CIDRS: an agent address outside them is never dialled. */
  agentCidrs?: readonly Cidr[];
  /** Agent calls: quick timeouts, and retries are BullMQ's (the job is retried). */
  agentTimeoutMs?: number;
  fleet?: FleetRuntime;
  warmPool?: WarmPoolOptions;
  snapshotStore?: string;
  registryCredentials?: RegistryCredentialAccess;
  webhooks?: WebhookConfig;
}): WorkerContext {
  // One keep-alive pool for every agent call of the process: a start per cold start.
  const agentFetch = keepAliveFetch();
  const agents = new Map<string, AgentClient>();
  // The certificate each node pinned at join, read from its row (a rejoin may have changed
  // it): at most once per node per PIN_TTL_MS, and a call never goes out without one.
  const pins = new Map<string, { pin: string | null; readAt: number }>();
  const rememberPin = (nodeId: string, pin: string | null) => {
    if (pins.size >= AGENT_CLIENTS_KEPT) pins.clear();
    pins.set(nodeId, { pin, readAt: Date.now() });
    return pin;
  };
  const pinOf = async (nodeId: string): Promise<string | null> => {
    const known = pins.get(nodeId);
    if (known && Date.now() - known.readAt < PIN_TTL_MS) return known.pin;
    const row = await deps.db.node.findUnique({
      where: { id: nodeId },
      select: { agentCertSha256: true },
    });
    return rememberPin(nodeId, row?.agentCertSha256 ?? null);
  };
  return {
    ...(deps.fleet ? { fleet: deps.fleet } : {}),
    ...(deps.warmPool ? { warmPool: deps.warmPool } : {}),
    ...(deps.snapshotStore ? { snapshotStore: deps.snapshotStore } : {}),
    ...(deps.registryCredentials ? { registryCredentials: deps.registryCredentials } : {}),
    ...(deps.webhooks ? { webhooks: deps.webhooks } : {}),
    db: deps.db,
    queues: deps.queues,
    log: deps.log,
    enqueue: (key, payload) => enqueue(deps.queues, key, payload),
    enqueueMany: (key, payloads) => enqueueMany(deps.queues, key, payloads),
    agent: (node) => {
      // A pin read in the caller's own statement is as fresh as a lookup: one query fewer
      // per start (most dispatches go to a node not called in the last 5 s).
      if (node.certSha256 !== undefined) rememberPin(node.id, node.certSha256);
      // A client per node and URL, kept. Bounded by clearing, which costs only a new client.
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
          nodeId: node.id,
          signingKey: deps.agentCallKey,
          certSha256: () => pinOf(node.id),
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
