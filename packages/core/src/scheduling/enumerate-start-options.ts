import { PHYSICS, peerLinkBytesPerSecond, type ScenarioPeer } from "../cold-start-model/index";
import { hostRates } from "../cold-start-model/engine-phases";
import { chooseRestoreWeights } from "../cold-start-model/restore-path";
import { StartPath } from "../vocabulary/index";
import type {
  InfeasibleOption,
  PeerSource,
  SchedulingDeployment,
  SchedulingEndpoint,
  SchedulingNode,
  SchedulingSnapshot,
  StartOption,
  StoredKernelCache,
} from "./start-option";

// Every node × path for one replica, split into what can be used and what cannot (with the
// reason, so the ColdStart record can say why each option lost). Feasibility only: how fast
// each option is belongs to the predictor.

export interface EnumeratedStartOptions {
  feasible: StartOption[];
  infeasible: InfeasibleOption[];
}

type PathCheck = { ok: true; option: StartOption } | { ok: false; reason: string };

/** Why a snapshot cannot be restored on this node, or null when it can. */
export function snapshotIncompatibility(
  snapshot: SchedulingSnapshot,
  node: Pick<SchedulingNode, "gpuModel" | "driverVersion" | "cudaVersion">,
): string | null {
  // cuda-checkpoint GPU state is tied to the exact device, driver and CUDA runtime: a
  // restore across any of them fails, or worse, corrupts the engine.
  if (snapshot.status === "quarantined") return "snapshot quarantined";
  if (snapshot.status !== "ready") return `snapshot ${snapshot.status}`;
  if (snapshot.gpuModel !== node.gpuModel)
    return `snapshot GPU ${snapshot.gpuModel} ≠ node ${node.gpuModel}`;
  if (snapshot.driverVersion !== node.driverVersion)
    return `snapshot driver ${snapshot.driverVersion} ≠ node ${node.driverVersion ?? "unknown"}`;
  if (snapshot.cudaVersion !== node.cudaVersion)
    return `snapshot CUDA ${snapshot.cudaVersion} ≠ node ${node.cudaVersion ?? "unknown"}`;
  return null;
}

/** The peer block of the cold-start scenario for a copy from `source`. */
export function scenarioPeerFrom(
  source: Pick<PeerSource, "host" | "transfersInFlight">,
  gpus: number,
): ScenarioPeer {
  // Built, not parsed: this runs for every node × source of a placement. The defaults are the
  // schema's (kernel caches sent, no fabric unless the source reports one).
  return {
    gpus: Math.max(1, gpus),
    sourceNetworkGbps: source.host.networkGbps,
    sourceRdmaGbps: source.host.rdmaGbps ?? 0,
    ...(source.host.pcieGBps > 0 ? { sourcePcieGBps: source.host.pcieGBps } : {}),
    sourceTransfersInFlight: source.transfersInFlight,
    kernelCaches: true,
  };
}

/** The deployment's stored kernel cache for this node's GPU model and driver, if any. */
function kernelCacheFor(
  node: Pick<SchedulingNode, "gpuModel" | "driverVersion">,
  caches: readonly StoredKernelCache[] | undefined,
): Pick<StoredKernelCache, "id" | "bytes"> | undefined {
  // Compiled kernels are built for one GPU architecture against one driver and CUDA stack:
  // a cache from another is useless at best.
  const cache = caches?.find(
    (c) => c.gpuModel === node.gpuModel && c.driverVersion === node.driverVersion,
  );
  return cache ? { id: cache.id, bytes: cache.bytes } : undefined;
}

/**
 * A pull or lazy start of `image`: the node holds it or not, and its engine compiles, with
 * the stored kernel cache for the node's GPU and driver where there is one.
 */
function compilingStart(
  base: Omit<StartOption, "locality">,
  node: SchedulingNode,
  deployment: SchedulingDeployment,
  image: string,
): PathCheck {
  const kernelCache = kernelCacheFor(node, deployment.kernelCaches);
  return {
    ok: true,
    option: {
      ...base,
      locality: node.cachedImageDigests.includes(image) ? "image-cached" : "cold",
      ...(kernelCache ? { kernelCache } : {}),
    },
  };
}

/** Of the serving replicas on other hosts, the one whose copy to `node` is fastest. */
function fastestPeerSource(
  node: SchedulingNode,
  sources: readonly PeerSource[],
  gpus: number,
): PeerSource | undefined {
  const rates = hostRates(node.host, PHYSICS);
  let best: PeerSource | undefined;
  let bestRate = 0;
  for (const source of sources) {
    if (source.nodeId === node.id) continue;
    const rate = peerLinkBytesPerSecond(
      { host: node.host, peer: scenarioPeerFrom(source, gpus) },
      rates,
      PHYSICS,
    );
    if (rate > bestRate) {
      best = source;
      bestRate = rate;
    }
  }
  return best;
}

function checkPath(
  path: StartPath,
  node: SchedulingNode,
  endpoint: SchedulingEndpoint,
  deployment: SchedulingDeployment,
  snapshots: readonly SchedulingSnapshot[],
  peerSources: readonly PeerSource[],
  /** Of `peerSources`, the one whose copy to this node is fastest (none on this node). */
  peerSource: PeerSource | undefined,
): PathCheck {
  const base = {
    nodeId: node.id,
    nodeName: node.name,
    path,
    gpusToReserve: endpoint.gpuCount,
    startsInFlight: node.startsInFlight,
  };
  // (No closures here: this runs for every node × path of every placement.)
  const gpus =
    node.freeGpus >= endpoint.gpuCount
      ? null
      : `needs ${endpoint.gpuCount} free GPU(s), node has ${Math.max(0, node.freeGpus)}`;

  switch (path) {
    case "warm": {
      const idle = node.idleWarmReplicas.find((r) => r.deploymentId === deployment.id);
      if (!idle) return { ok: false, reason: "no idle warm replica of this deployment" };
      // The idle replica already holds its GPUs: a handover reserves nothing new.
      return {
        ok: true,
        option: {
          ...base,
          locality: "warm-replica",
          gpusToReserve: 0,
          warmReplicaId: idle.replicaId,
        },
      };
    }
    case "wake": {
      const sleeping = node.sleepingReplicas?.find((r) => r.deploymentId === deployment.id);
      if (!sleeping) return { ok: false, reason: "no sleeping replica of this deployment" };
      // The engine gave its GPU memory back when it slept: waking needs the GPUs again.
      if (gpus) return { ok: false, reason: gpus };
      return {
        ok: true,
        option: { ...base, locality: "sleeping-replica", sleepingReplica: sleeping },
      };
    }
    case "restore": {
      const mine = snapshots.filter((s) => s.deploymentId === deployment.id);
      if (mine.length === 0) return { ok: false, reason: "no snapshot of this deployment" };
      const usable = mine.filter((s) => snapshotIncompatibility(s, node) === null);
      const local = usable.find((s) => node.localSnapshotIds.includes(s.id));
      const remote = usable.find((s) => s.inStore);
      const chosen = local ?? remote;
      if (!chosen) {
        const reasons = mine.map(
          (s) =>
            snapshotIncompatibility(s, node) ?? "snapshot neither on the node nor in the store",
        );
        return { ok: false, reason: [...new Set(reasons)].join("; ") };
      }
      if (gpus) return { ok: false, reason: gpus };
      // A level-2 image lacks its weights: staged apart from this host's files, or sent by a
      // serving replica elsewhere faster than this host's disk gives them back.
      const source = node.peerTransfer !== false ? peerSource : undefined;
      const { stageWeights, weightsFromPeer } = chooseRestoreWeights({
        host: node.host,
        engine: deployment.engine,
        snapshotBytes: chosen.bytes,
        sleepLevel: chosen.sleepLevel,
        ...(source ? { peer: scenarioPeerFrom(source, endpoint.gpuCount) } : {}),
      });
      return {
        ok: true,
        option: {
          ...base,
          locality: chosen === local ? "snapshot-local" : "snapshot-store",
          snapshotId: chosen.id,
          ...(weightsFromPeer ? { peerSource: source } : stageWeights ? { stageWeights } : {}),
        },
      };
    }
    case "peer": {
      if (node.peerTransfer === false)
        return { ok: false, reason: "node's engines cannot receive a peer copy (no ModelExpress)" };
      if (peerSources.length === 0)
        return { ok: false, reason: "no serving replica of this deployment to copy from" };
      const source = peerSource;
      if (!source)
        return {
          ok: false,
          reason: "the only serving replicas of this deployment are on this node",
        };
      if (gpus) return { ok: false, reason: gpus };
      // The image still comes from the registry (or the node's store), its eStargz variant
      // where there is one (the weights layers are then never fetched); the weights do not.
      const lazyImage = deployment.estargzDigest !== null && node.estargzSupported;
      const cached =
        node.cachedImageDigests.includes(deployment.imageDigest) ||
        (lazyImage && node.cachedImageDigests.includes(deployment.estargzDigest!));
      return {
        ok: true,
        option: {
          ...base,
          locality: cached ? "image-cached" : "cold",
          peerSource: source,
          ...(lazyImage ? { peerLazyImage: true } : {}),
        },
      };
    }
    case "lazy": {
      if (!deployment.estargzDigest)
        return { ok: false, reason: "deployment has no eStargz image" };
      if (!node.estargzSupported) return { ok: false, reason: "node has no stargz-snapshotter" };
      if (gpus) return { ok: false, reason: gpus };
      return compilingStart(base, node, deployment, deployment.estargzDigest);
    }
    case "pull": {
      if (gpus) return { ok: false, reason: gpus };
      return compilingStart(base, node, deployment, deployment.imageDigest);
    }
  }
}

/** The feasible start options of one replica of `deployment`, and every infeasible one with its reason. */
export function enumerateStartOptions(input: {
  endpoint: SchedulingEndpoint;
  deployment: SchedulingDeployment;
  nodes: readonly SchedulingNode[];
  snapshots: readonly SchedulingSnapshot[];
  /** Serving replicas of the deployment a peer copy can come from (absent: none). */
  peerSources?: readonly PeerSource[];
}): EnumeratedStartOptions {
  const { endpoint, deployment, nodes, snapshots } = input;
  const peerSources = input.peerSources ?? [];
  const feasible: StartOption[] = [];
  const infeasible: InfeasibleOption[] = [];
  // Sources are weighed for the paths that copy from one (peer, a restore's weights).
  const copies =
    peerSources.length > 0 &&
    (endpoint.allowedPaths.includes("peer") || endpoint.allowedPaths.includes("restore"));
  for (const node of nodes) {
    const nodeReason =
      node.state !== "ready"
        ? `node ${node.state}`
        : node.gpuModel !== endpoint.gpuType
          ? `GPU ${node.gpuModel} ≠ endpoint's ${endpoint.gpuType}`
          : null;
    // Once per node, not per path: the peer and restore checks share it.
    const peerSource =
      copies && !nodeReason ? fastestPeerSource(node, peerSources, endpoint.gpuCount) : undefined;
    for (const path of StartPath.options) {
      const check: PathCheck = nodeReason
        ? { ok: false, reason: nodeReason }
        : !endpoint.allowedPaths.includes(path)
          ? { ok: false, reason: "path not allowed by the endpoint" }
          : checkPath(path, node, endpoint, deployment, snapshots, peerSources, peerSource);
      if (check.ok) feasible.push(check.option);
      else infeasible.push({ nodeId: node.id, nodeName: node.name, path, reason: check.reason });
    }
  }
  return { feasible, infeasible };
}
