import { type AgentInventory, StartPath } from "@thaw/protocol";
import { type RuntimeInventory } from "../runtimes/runtime.ts";
import { AGENT_VERSION } from "./agent-version.ts";
import { type GpuLedger } from "./gpu-ledger.ts";
import { type HostRuntime } from "./host-runtime.ts";
import { type ReplicaLifecycle } from "./replica-lifecycle.ts";

/** What the runtime holds now: read without awaiting when the runtime can. */
export function readRuntimeInventory(runtime: HostRuntime): Promise<RuntimeInventory> {
  return runtime.inventoryNow ? Promise.resolve(runtime.inventoryNow()) : runtime.inventory();
}

export interface HostInventorySource {
  name: string;
  nodeId: string | undefined;
  runtime: HostRuntime;
  gpus: GpuLedger;
  replicas: ReplicaLifecycle;
}

/**
 * GET /v1/inventory: the runtime's images, snapshots and replicas, each replica with the GPUs
 * and cold start this host accepted it with, and the GPUs as the ledger holds them.
 */
export async function describeHostInventory(host: HostInventorySource): Promise<AgentInventory> {
  const { runtime, gpus, replicas } = host;
  const inventory = await readRuntimeInventory(runtime);
  const held = gpus.held();
  return {
    node: {
      name: host.name,
      nodeId: host.nodeId ?? null,
      runtime: runtime.kind,
      agentVersion: AGENT_VERSION,
    },
    gpus: { total: gpus.total, free: gpus.free, used: held.length, held },
    capabilities: {
      paths: runtime.capabilities?.().paths ?? [...StartPath.options],
    },
    images: inventory.images,
    snapshotIds: inventory.snapshotIds,
    warmReplicaIds: inventory.warmReplicaIds,
    sleepingReplicaIds: inventory.sleepingReplicaIds,
    replicas: inventory.replicas.map((replica) => {
      const record = replicas.recordOf(replica.replicaId);
      return {
        ...replica,
        gpus: record?.gpus ?? [],
        ...(record ? { coldStartId: record.coldStartId, path: record.path } : {}),
      };
    }),
  };
}
