import type { Db } from "@thaw/db";
import { assertCan, type Actor } from "../auth/index.ts";
import { findEndpoint } from "../endpoints/find-endpoint.ts";
import { AppError } from "../errors/index.ts";
import { schedulingDeployment } from "../placement/scheduling-inputs.ts";
import type { EndpointSpec } from "../replay/index.ts";
import {
  effectiveWaitPrice,
  estimateSnapshotBytes,
  NODE_HOST_COLUMNS_SELECT,
} from "../scheduling/index.ts";
import { loadToRequests } from "./load-to-requests.ts";
import { whatIfFleet } from "./what-if-fleet.ts";
import { replayWhatIf, whatIfPoint, whatIfRuns, WHAT_IF_ENDPOINT } from "./what-if-points.ts";
import type { WhatIfPoint, WhatIfReport } from "./what-if-schemas.ts";
import { noLoadReport, whatIfWindow } from "./what-if-window.ts";

/**
 * The what-if of one endpoint: its recorded load over the window (default the last week)
 * replayed through the replay engine — the scheduler's own decision functions in virtual
 * time — under thaw at today's price, the price sweep and the default objective, and the
 * fixed pull and lazy keep-alives; each run a point of wait against idle GPU-hours and cost.
 * Its desired counts set by hand or over REST are not replayed (counted in the answer). The
 * endpoint runs as the live scheduler would start it: its active deployment's image,
 * engine figures and snapshot (a ready one's, else the size a capture would have when the
 * platform takes snapshots), its paths, GPUs, bounds and target concurrency; on its org's
 * hosts of its GPU model (what-if-fleet.ts). CPU-bound for about a second on a week: the
 * scheduler runs it (the whatIf queue), not the web server; `between` is awaited after each
 * policy's replay so the caller's event loop gets a turn.
 */
export async function buildEndpointWhatIf({
  actor,
  endpoint,
  input,
  db,
  now = new Date(),
  where = "query",
  snapshotsEnabled,
  between,
}: {
  actor: Actor;
  endpoint: unknown;
  input?: unknown;
  db: Db;
  now?: Date;
  where?: string;
  /** The platform captures snapshots (THAW_SNAPSHOT_REGISTRY is set): a deployment without one gets one. */
  snapshotsEnabled: boolean;
  between?: () => Promise<void>;
}): Promise<WhatIfReport> {
  assertCan(actor, "endpoints:read");
  const row = await findEndpoint(db, actor, endpoint);
  const window = whatIfWindow(input, where, now);
  const org = await db.org.findUniqueOrThrow({
    where: { id: actor.orgId },
    select: { gpuSecondsPerWaitSecond: true },
  });
  const current = effectiveWaitPrice(row.gpuSecondsPerWaitSecond, org.gpuSecondsPerWaitSecond);
  const samples = await db.loadSample.findMany({
    where: { orgId: actor.orgId, endpointId: row.id, minute: { gte: window.from, lt: window.to } },
    select: { minute: true, maxConcurrency: true, sumConcurrency: true, signals: true },
  });
  if (samples.length === 0) return noLoadReport({ endpoint: row, window, current });

  const deploymentRow = row.activeDeploymentId
    ? await db.deployment.findFirst({ where: { id: row.activeDeploymentId, orgId: actor.orgId } })
    : null;
  if (!deploymentRow)
    throw new AppError(
      "UNPROCESSABLE",
      "The endpoint has no active deployment: there is nothing to start in a replay.",
      { field: "endpoint" },
    );
  const deployment = schedulingDeployment(deploymentRow);
  const snapshot = row.allowedPaths.includes("restore")
    ? await db.snapshot.findFirst({
        where: { deploymentId: deployment.id, orgId: actor.orgId, status: "ready" },
        orderBy: { createdAt: "desc" },
        select: { bytes: true, sleepLevel: true },
      })
    : null;

  const load = loadToRequests({
    samples,
    from: window.from,
    endpoint: WHAT_IF_ENDPOINT,
    concurrency: row.targetConcurrency,
  });
  const spec: EndpointSpec = {
    gpuType: row.gpuType,
    gpus: row.gpuCount,
    concurrency: load.slotsPerReplica,
    image: { layers: [...deployment.imageLayers], readFraction: deployment.imageReadFraction },
    engine: deployment.engine,
    estargz: deployment.estargzDigest !== null && row.allowedPaths.includes("lazy"),
    snapshot: snapshot
      ? {
          bytes: Number(snapshot.bytes),
          sleepLevel: Math.min(2, Math.max(0, snapshot.sleepLevel)) as 0 | 1 | 2,
        }
      : snapshotsEnabled && row.allowedPaths.includes("restore")
        ? { bytes: estimateSnapshotBytes(deployment.engine.weightsBytes, 2), sleepLevel: 2 }
        : null,
    minReplicas: row.minReplicas,
    maxReplicas: Math.max(1, row.maxReplicas),
  };
  const nodes = await db.node.findMany({
    where: {
      orgId: actor.orgId,
      gpuModel: row.gpuType,
      state: { in: ["requested", "booting", "ready", "draining"] },
    },
    orderBy: { createdAt: "asc" },
    select: {
      name: true,
      instanceType: true,
      gpuModel: true,
      gpuCount: true,
      hourlyPriceUsd: true,
      ...NODE_HOST_COLUMNS_SELECT,
    },
  });
  const fleet = whatIfFleet({
    nodes,
    gpuType: row.gpuType,
    gpusPerReplica: row.gpuCount,
    maxReplicas: spec.maxReplicas,
  });

  // A person's (or a key's) desired counts in the window are not replayed: the what-if judges
  // each policy on the load alone. The answer says how many there were, so a reader knows when
  // today's live figures had help the replay does not give.
  const manualScaleEvents = await db.scaleEvent.count({
    where: {
      orgId: actor.orgId,
      endpointId: row.id,
      source: { in: ["dashboard", "api"] },
      createdAt: { gte: window.from, lt: window.to },
    },
  });

  const started = performance.now();
  const points: WhatIfPoint[] = [];
  for (const { run, result } of replayWhatIf({
    requests: load.requests,
    spec,
    hosts: fleet.hosts,
    runs: whatIfRuns(current),
  })) {
    points.push(
      whatIfPoint(run, result, {
        current,
        orgPrice: org.gpuSecondsPerWaitSecond,
        usdPerGpuHour: fleet.usdPerGpuHour,
      }),
    );
    await between?.();
  }
  const replaySeconds = Math.round(performance.now() - started) / 1000;

  let peak = 0;
  let slotMinutes = 0;
  for (const s of samples) {
    peak = Math.max(peak, s.maxConcurrency);
    if (s.signals > 0) slotMinutes += Math.min(s.sumConcurrency / s.signals, s.maxConcurrency);
  }
  const windowMinutes = (window.to.getTime() - window.from.getTime()) / 60_000;
  const notes = [
    fleet.source === "nodes"
      ? `Replayed on the org's ${row.gpuType} hosts (${fleet.profile}), grown to hold ${spec.maxReplicas} replica(s) as the fleet worker would.`
      : `The org has no ${row.gpuType} host: replayed on the published ${fleet.profile} profile, without a price.`,
    "Each minute's recorded peak arrives at the minute's start and shares the minute's mean load.",
  ];
  if (manualScaleEvents > 0)
    notes.push(
      `${manualScaleEvents} desired count(s) set by hand or over REST in the window are not replayed: each setting is judged on the load alone.`,
    );
  if (load.unit > 1)
    notes.push(`Each replayed request stands for ${load.unit} concurrent ones (a large load).`);
  return {
    endpointId: row.id,
    slug: row.slug,
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    status: "ok",
    message: notes.join(" "),
    current: { gpuSecondsPerWaitSecond: current.value, source: current.source },
    load: {
      minutes: samples.length,
      peakConcurrency: peak,
      meanConcurrency: Math.round((slotMinutes / windowMinutes) * 1000) / 1000,
      replayedRequests: load.requests.length,
      unit: load.unit,
      manualScaleEvents,
    },
    fleet: {
      gpuModel: row.gpuType,
      source: fleet.source,
      hosts: fleet.hosts.length,
      profile: fleet.profile,
      usdPerGpuHour: fleet.usdPerGpuHour,
    },
    points,
    replaySeconds,
  };
}
