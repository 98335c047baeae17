// The fleet worker's decision (issue 6, ARCHITECTURE.md §2 "fleet"): which hosts to launch for
// replicas no node can take, and which idle hosts to retire — a pure function of a snapshot
// of the fleet, the pending demand and the offerings still available.
//
// Launch: for each GPU type with pending replicas, hosts are added from the ordered offerings
// (instance type × zone, the operator's order of preference: cheapest first is typical) that
// carry that GPU, skipping offerings marked unavailable (InsufficientInstanceCapacity) until
// their TTL runs out, until the pending GPUs fit — minus what hosts already requested or
// booting will bring, so a retry does not double the order — and while the org's spend
// cap (USD/hour) allows. Retire: a ready host holding no replica and no warm replica, idle
// for the cool-down, and not needed for pending work of its GPU type.

export interface Offering {
  instanceType: string;
  zone: string;
  gpuModel: string;
  gpusPerHost: number;
  priceUsdPerHour: number;
}

export interface FleetHost {
  nodeId: string;
  gpuModel: string;
  gpus: number;
  state: "requested" | "booting" | "ready" | "draining" | "lost" | "terminated";
  priceUsdPerHour: number;
  /** Replicas placed, starting, ready or parked warm on it. */
  replicas: number;
  /** Since when it holds nothing (null while it holds something). */
  idleSinceSeconds: number | null;
}

export interface PendingDemand {
  gpuModel: string;
  /** GPUs wanted by replicas that no node can take now. */
  gpus: number;
}

export interface FleetChangeInput {
  nowSeconds: number;
  offerings: readonly Offering[];
  /** offering key (`type@zone`) → until when it is unavailable. */
  unavailableUntil: Readonly<Record<string, number>>;
  hosts: readonly FleetHost[];
  pending: readonly PendingDemand[];
  spendCapUsdPerHour: number | null;
  idleCooldownSeconds: number;
  /** Upper bound on launches per decision (a bounded blast radius). */
  maxLaunches: number;
}

export interface FleetChange {
  launch: { offering: Offering; reason: string }[];
  retire: { nodeId: string; reason: string }[];
  /** Demand left unserved, and why — shown as the pending replicas' reason. */
  blocked: {
    gpuModel: string;
    gpus: number;
    /** What stopped it, as data (the spend cap's episodes are keyed on it); reason: in words. */
    cause: "launch_limit" | "no_capacity" | "no_offering" | "spend_cap";
    reason: string;
  }[];
}

export const offeringKey = (o: Pick<Offering, "instanceType" | "zone">) =>
  `${o.instanceType}@${o.zone}`;

const LIVE: FleetHost["state"][] = ["requested", "booting", "ready", "draining"];

export function planFleetChange(input: FleetChangeInput): FleetChange {
  const launch: FleetChange["launch"] = [];
  const blocked: FleetChange["blocked"] = [];
  let spend = input.hosts
    .filter((h) => LIVE.includes(h.state))
    .reduce((sum, h) => sum + h.priceUsdPerHour, 0);

  for (const demand of input.pending) {
    // GPUs on their way: hosts requested or booting for this GPU type serve this demand.
    const coming = input.hosts
      .filter(
        (h) => h.gpuModel === demand.gpuModel && (h.state === "requested" || h.state === "booting"),
      )
      .reduce((sum, h) => sum + h.gpus, 0);
    let missing = Math.max(0, demand.gpus - coming);
    const usable = input.offerings.filter(
      (o) =>
        o.gpuModel === demand.gpuModel &&
        o.gpusPerHost > 0 &&
        (input.unavailableUntil[offeringKey(o)] ?? -Infinity) <= input.nowSeconds,
    );
    while (missing > 0) {
      if (launch.length >= input.maxLaunches) {
        blocked.push({
          gpuModel: demand.gpuModel,
          gpus: missing,
          cause: "launch_limit",
          reason: `launch limit of ${input.maxLaunches} hosts per decision reached`,
        });
        break;
      }
      const offering = usable[0];
      if (!offering) {
        const offered = input.offerings.some((o) => o.gpuModel === demand.gpuModel);
        blocked.push({
          gpuModel: demand.gpuModel,
          gpus: missing,
          cause: offered ? "no_capacity" : "no_offering",
          reason: offered
            ? `every ${demand.gpuModel} offering is out of capacity for now`
            : `no offering provides ${demand.gpuModel} GPUs`,
        });
        break;
      }
      if (
        input.spendCapUsdPerHour !== null &&
        spend + offering.priceUsdPerHour > input.spendCapUsdPerHour
      ) {
        blocked.push({
          gpuModel: demand.gpuModel,
          gpus: missing,
          cause: "spend_cap",
          reason: `spend cap $${input.spendCapUsdPerHour}/h reached ($${spend.toFixed(2)}/h running)`,
        });
        break;
      }
      launch.push({
        offering,
        reason: `${missing} ${demand.gpuModel} GPU(s) pending with no node to take them`,
      });
      spend += offering.priceUsdPerHour;
      missing -= offering.gpusPerHost;
    }
  }

  const wanted = new Set(input.pending.filter((p) => p.gpus > 0).map((p) => p.gpuModel));
  const retire = input.hosts
    .filter(
      (h) =>
        h.state === "ready" &&
        h.replicas === 0 &&
        h.idleSinceSeconds !== null &&
        input.nowSeconds - h.idleSinceSeconds >= input.idleCooldownSeconds &&
        !wanted.has(h.gpuModel),
    )
    .map((h) => ({
      nodeId: h.nodeId,
      reason: `idle for ${Math.round(input.nowSeconds - h.idleSinceSeconds!)} s (cool-down ${input.idleCooldownSeconds} s)`,
    }));
  return { launch, retire, blocked };
}
