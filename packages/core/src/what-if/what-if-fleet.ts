import {
  HOST_PROFILES,
  scenarioHostFromProfile,
  type HostProfile,
} from "../cold-start-model/index.ts";
import type { ReplayHost } from "../replay/index.ts";
import { nodeScenarioHost, type NodeHostColumns } from "../scheduling/index.ts";

// The hosts a what-if replays on: the org's nodes of the endpoint's GPU model with their own
// figures (network, disk as placement counts it, PCIe), priced per GPU as the cost ledger
// prices them. The fleet worker launches hosts when replicas wait for a GPU, so the fleet is
// grown with copies of its first host until it holds the endpoint's maxReplicas (the replay
// does not charge the launch's boot). An org with no such node gets the published profile of
// the EC2 type with that GPU (g5.xlarge when none has it), unpriced.

export interface WhatIfNodeRow extends NodeHostColumns {
  name: string;
  instanceType: string;
  gpuModel: string;
  gpuCount: number;
  hourlyPriceUsd: number | null;
}

export interface WhatIfFleet {
  hosts: ReplayHost[];
  source: "nodes" | "default";
  /** The instance type (or types) the hosts are. */
  profile: string;
  /** GPU-weighted mean of the priced hosts' price per GPU-hour; null: none has a price. */
  usdPerGpuHour: number | null;
}

const stripVendor = (model: string) => model.replace(/^NVIDIA /, "");

/** The published profile whose GPU is `gpuType`, else g5.xlarge's. */
export function defaultProfileFor(gpuType: string): HostProfile {
  const profiles = Object.values(HOST_PROFILES) as HostProfile[];
  return (
    profiles.find((p) => p.gpu && stripVendor(p.gpu.model) === gpuType) ??
    HOST_PROFILES["g5.xlarge"]
  );
}

export function whatIfFleet(o: {
  nodes: readonly WhatIfNodeRow[];
  gpuType: string;
  gpusPerReplica: number;
  maxReplicas: number;
}): WhatIfFleet {
  const needed = o.maxReplicas * o.gpusPerReplica;
  const usable = o.nodes.filter((n) => n.gpuModel === o.gpuType && n.gpuCount >= o.gpusPerReplica);
  const hosts: ReplayHost[] = usable.map((n) => ({
    name: n.name,
    gpuModel: o.gpuType,
    gpus: n.gpuCount,
    host: nodeScenarioHost(n),
  }));
  let gpus = 0;
  let pricedGpus = 0;
  let usd = 0;
  for (const n of usable) {
    gpus += n.gpuCount;
    if (n.hourlyPriceUsd !== null && n.gpuCount > 0) {
      pricedGpus += n.gpuCount;
      usd += n.hourlyPriceUsd;
    }
  }
  if (hosts.length > 0) {
    const first = hosts[0]!;
    for (let i = 1; gpus < needed; i++) {
      hosts.push({ ...first, name: `${first.name}+${i}` });
      gpus += first.gpus;
    }
    return {
      hosts,
      source: "nodes",
      profile: [...new Set(usable.map((n) => n.instanceType))].join(", "),
      usdPerGpuHour: pricedGpus > 0 ? Math.round((usd / pricedGpus) * 10_000) / 10_000 : null,
    };
  }
  const profile = defaultProfileFor(o.gpuType);
  const perHost = Math.max(o.gpusPerReplica, profile.gpu?.count ?? 1);
  const count = Math.max(1, Math.ceil(needed / perHost));
  const host = scenarioHostFromProfile(profile);
  return {
    hosts: Array.from({ length: count }, (_, i) => ({
      name: `${profile.instanceType}-${i + 1}`,
      gpuModel: o.gpuType,
      gpus: perHost,
      host,
    })),
    source: "default",
    profile: profile.instanceType,
    usdPerGpuHour: null,
  };
}
