// The fleet garbage collector's decision (issue 6): reconcile what the provider runs with the
// node rows. Instances the control plane does not know (their node row is missing or already
// terminated) cost money and serve nothing: terminate them. Node rows whose instance is gone
// would be waited on for ever: mark them terminated. A launch that started an instance but
// crashed before recording its id is completed here by adopting the tagged instance.

export interface GarbageInstance {
  instanceId: string;
  /** The instance's thaw:node-id tag. */
  nodeId: string | null;
}

export interface GarbageNode {
  nodeId: string;
  instanceId: string | null;
  state: "requested" | "booting" | "ready" | "draining" | "lost" | "terminated";
  createdAtSeconds: number;
}

export interface FleetGarbageInput {
  nowSeconds: number;
  /** Live instances of this cluster at the provider. */
  instances: readonly GarbageInstance[];
  /** Node rows of this provider. */
  nodes: readonly GarbageNode[];
  /** How long a launched host may take to report an instance id and then to join. */
  launchGraceSeconds: number;
}

export interface FleetGarbage {
  terminate: { instanceId: string; reason: string }[];
  markTerminated: { nodeId: string; reason: string }[];
  adopt: { nodeId: string; instanceId: string }[];
}

export function planFleetGarbage(input: FleetGarbageInput): FleetGarbage {
  const nodes = new Map(input.nodes.map((n) => [n.nodeId, n]));
  const liveIds = new Set(input.instances.map((i) => i.instanceId));
  const terminate: FleetGarbage["terminate"] = [];
  const adopt: FleetGarbage["adopt"] = [];
  const adoptedNodes = new Set<string>();

  for (const instance of input.instances) {
    const node = instance.nodeId ? nodes.get(instance.nodeId) : undefined;
    if (!instance.nodeId) {
      terminate.push({
        instanceId: instance.instanceId,
        reason: "tagged for this cluster but with no thaw:node-id",
      });
    } else if (!node) {
      terminate.push({ instanceId: instance.instanceId, reason: `no node row ${instance.nodeId}` });
    } else if (node.state === "terminated") {
      terminate.push({
        instanceId: instance.instanceId,
        reason: `node ${node.nodeId} is terminated`,
      });
    } else if (node.instanceId === null && !adoptedNodes.has(node.nodeId)) {
      adopt.push({ nodeId: node.nodeId, instanceId: instance.instanceId });
      adoptedNodes.add(node.nodeId);
    } else if (node.instanceId !== instance.instanceId) {
      // A second instance for one node (a retried launch on an emulator or a provider without
      // idempotency tokens): keep the recorded one.
      terminate.push({
        instanceId: instance.instanceId,
        reason: `node ${node.nodeId} already runs on ${node.instanceId ?? "another instance"}`,
      });
    }
  }

  const markTerminated: FleetGarbage["markTerminated"] = [];
  for (const node of input.nodes) {
    if (node.state === "terminated" || adoptedNodes.has(node.nodeId)) continue;
    const overdue = input.nowSeconds - node.createdAtSeconds > input.launchGraceSeconds;
    if (node.instanceId !== null && !liveIds.has(node.instanceId)) {
      markTerminated.push({
        nodeId: node.nodeId,
        reason: `instance ${node.instanceId} no longer exists`,
      });
    } else if (node.instanceId !== null && node.state === "requested" && overdue) {
      // Launched but never joined: a broken AMI, user-data or network path. Don't pay for it.
      const reason = `instance ${node.instanceId} did not join within ${input.launchGraceSeconds} s`;
      terminate.push({ instanceId: node.instanceId, reason });
      markTerminated.push({ nodeId: node.nodeId, reason });
    } else if (node.instanceId === null && overdue) {
      markTerminated.push({
        nodeId: node.nodeId,
        reason: `launch did not report an instance within ${input.launchGraceSeconds} s`,
      });
    }
  }
  return { terminate, markTerminated, adopt };
}
