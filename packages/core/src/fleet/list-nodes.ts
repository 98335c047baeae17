import type { Db } from "@thaw/db";
import { z } from "zod";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import { DiskFigureSource, effectiveDiskFigures } from "../scheduling/effective-disk-figures.ts";
import {
  GPU_HOLDING_REPLICA_STATES,
  NodeProvider,
  NodeRuntime,
  NodeState,
  ReplicaState,
  SnapshotStatus,
} from "../vocabulary/index.ts";

/** A node is shown as stale when it has missed this many heartbeat intervals. */
export const NODE_STALE_AFTER_SECONDS = 20;

/** A node as the fleet card shows it: its figures, state, credential and what it holds. */
export const NodeView = z.object({
  id: z.string(),
  name: z.string(),
  provider: NodeProvider,
  runtime: NodeRuntime,
  instanceType: z.string(),
  zone: z.string().nullable(),
  gpuModel: z.string(),
  gpuCount: z.number(),
  gpusUsed: z.number(),
  cachedImages: z.number(),
  networkGbps: z.number(),
  /** The disk as placement sees it (effectiveDiskFigures), and where the figure came from. */
  diskWriteMiBps: z.number(),
  diskSource: DiskFigureSource,
  state: NodeState,
  stateReason: z.string().nullable(),
  /** Revoked by an operator: only a join token made for it lets its host join again. */
  credentialRevoked: z.boolean(),
  /** A rotation was asked for and the agent has not used its new credential yet. */
  credentialRotationPending: z.boolean(),
  agentVersion: z.string().nullable(),
  lastHeartbeatAt: z.date().nullable(),
  heartbeatAgeSeconds: z.number().nullable(),
  stale: z.boolean(),
  holds: z.object({
    replicas: z.array(z.object({ endpoint: z.string(), state: ReplicaState })),
    images: z.array(z.object({ label: z.string(), bytes: z.number(), estargz: z.boolean() })),
    snapshots: z.array(z.object({ label: z.string(), status: SnapshotStatus, bytes: z.number() })),
  }),
});
export const NodeList = z.array(NodeView);
export type NodeList = z.infer<typeof NodeList>;

export async function listNodes({ actor, db }: { actor: Actor; db: Db }): Promise<NodeList> {
  assertCan(actor, "fleet:read");
  const nodes = await db.node.findMany({
    where: { ...orgScope(actor), state: { not: "terminated" } },
    orderBy: { createdAt: "asc" },
    include: { _count: { select: { reservations: true, images: true } } },
    take: 1000,
  });
  const holdings = await loadHoldings(
    db,
    actor,
    nodes.map((n) => n.id),
  );
  const now = Date.now();
  return nodes.map((n) => ({
    id: n.id,
    name: n.name,
    provider: n.provider,
    runtime: n.runtime,
    instanceType: n.instanceType,
    zone: n.zone,
    gpuModel: n.gpuModel,
    gpuCount: n.gpuCount,
    gpusUsed: n._count.reservations,
    cachedImages: n._count.images,
    networkGbps: n.networkGbps,
    diskWriteMiBps: effectiveDiskFigures(n).writeMiBps,
    diskSource: effectiveDiskFigures(n).source,
    state: n.state,
    stateReason: n.stateReason,
    credentialRevoked: n.credentialRevokedAt !== null,
    credentialRotationPending: n.credentialRotationRequestedAt !== null,
    agentVersion: n.agentVersion,
    lastHeartbeatAt: n.lastHeartbeatAt,
    heartbeatAgeSeconds: n.lastHeartbeatAt ? (now - n.lastHeartbeatAt.getTime()) / 1000 : null,
    stale:
      !n.lastHeartbeatAt || now - n.lastHeartbeatAt.getTime() > NODE_STALE_AFTER_SECONDS * 1000,
    holds: holdings(n.id),
  }));
}

/**
 * What each node holds, named as an operator knows it: replicas by endpoint and state, cached
 * images and snapshots by the endpoint and deployment version they belong to. Three set-based
 * reads for the whole fleet, all within the actor's org.
 */
async function loadHoldings(db: Db, actor: Actor, nodeIds: string[]) {
  const [replicas, images, copies] = await Promise.all([
    db.replica.findMany({
      where: {
        ...orgScope(actor),
        nodeId: { in: nodeIds },
        state: { in: [...GPU_HOLDING_REPLICA_STATES] },
      },
      select: { nodeId: true, state: true, endpoint: { select: { slug: true } } },
    }),
    db.nodeImage.findMany({
      where: { nodeId: { in: nodeIds }, node: orgScope(actor) },
      select: { nodeId: true, digest: true, bytes: true, estargz: true },
    }),
    db.nodeSnapshot.findMany({
      where: { nodeId: { in: nodeIds }, node: orgScope(actor) },
      select: {
        nodeId: true,
        snapshot: {
          select: {
            status: true,
            bytes: true,
            deployment: { select: { version: true, endpoint: { select: { slug: true } } } },
          },
        },
      },
    }),
  ]);
  const digests = [...new Set(images.map((i) => i.digest))];
  const deployments = await db.deployment.findMany({
    where: {
      ...orgScope(actor),
      OR: [{ imageDigest: { in: digests } }, { estargzDigest: { in: digests } }],
    },
    select: {
      imageDigest: true,
      estargzDigest: true,
      version: true,
      endpoint: { select: { slug: true } },
    },
  });
  const digestLabel = new Map<string, string>();
  for (const d of deployments) {
    digestLabel.set(d.imageDigest, `${d.endpoint.slug} v${d.version}`);
    if (d.estargzDigest) digestLabel.set(d.estargzDigest, `${d.endpoint.slug} v${d.version}`);
  }
  // Grouped once by node: the card refetches every 2 s over up to 1,000 nodes.
  const byNode = <T extends { nodeId: string | null }, U>(rows: T[], shape: (row: T) => U) => {
    const grouped = new Map<string, U[]>();
    for (const row of rows) {
      if (!row.nodeId) continue;
      const list = grouped.get(row.nodeId) ?? [];
      list.push(shape(row));
      grouped.set(row.nodeId, list);
    }
    return grouped;
  };
  const replicasBy = byNode(replicas, (r) => ({ endpoint: r.endpoint.slug, state: r.state }));
  const imagesBy = byNode(images, (i) => ({
    label: digestLabel.get(i.digest) ?? i.digest.slice(0, 19),
    bytes: Number(i.bytes),
    estargz: i.estargz,
  }));
  const snapshotsBy = byNode(copies, (c) => ({
    label: `${c.snapshot.deployment.endpoint.slug} v${c.snapshot.deployment.version}`,
    status: c.snapshot.status,
    bytes: Number(c.snapshot.bytes),
  }));
  return (nodeId: string) => ({
    replicas: replicasBy.get(nodeId) ?? [],
    images: imagesBy.get(nodeId) ?? [],
    snapshots: snapshotsBy.get(nodeId) ?? [],
  });
}
