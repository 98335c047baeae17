import { PHYSICS } from "../cold-start-model/index";
import type { ScenarioHost } from "../cold-start-model/index";
import type { SnapshotStatus, StartPath } from "../vocabulary/index";
import {
  physicsPriorSeconds,
  predictTimeToReady,
  type HistoryForOption,
} from "./predict-time-to-ready";
import type {
  Locality,
  SchedulingDeployment,
  SchedulingEndpoint,
  SchedulingNode,
} from "./start-option";

// Whether capturing a CRIU snapshot of a deployment pays off now (ARCHITECTURE.md §5 "Snapshot").
//
// A capture is not free: the agent checkpoints a ready replica and then stops it, so the
// endpoint loses that replica for the capture itself plus the restore that replaces it, and
// the snapshot occupies storage the org pays for. It pays off when the starts it speeds up
// save more than that:
//
//   saved per start = best current non-warm path on the source node − restore there
//   expected starts = cold starts in the recent window × horizon / window
//   capture iff  saved per start ≥ max(minSavedSeconds, minSpeedupFraction × current)
//           and  saved per start × expected starts ≥ costWeight × (capture + restore seconds)
//           and  the org's snapshot bytes + this one ≤ its storage budget
//
// The restore side is the physics prior (this deployment has never been restored; restore
// history of the endpoint and the fleet still shrinks it); the current paths are the
// posterior of what this deployment has measured. Compared on the source node, because that
// is where the replica's replacement — the first start the snapshot can serve — comes up.

export interface SnapshotCaptureSettings {
  /** Restore must be at least this share faster than the current best path (0.25: ≤ 75 %). */
  minSpeedupFraction: number;
  /** ... and at least this many seconds faster: a second saved is not worth a checkpoint. */
  minSavedSeconds: number;
  /** The cold-start rate is counted over this window ... */
  windowSeconds: number;
  /** ... and assumed to last this long (how long a snapshot of a deployment is useful). */
  horizonSeconds: number;
  /** Saved seconds must exceed the capture's cost in replica-seconds by this factor. */
  costWeight: number;
  /** vLLM sleep level at capture: 2 discards weights (3.4 GB image instead of 11.4, field notes §3). */
  sleepLevel: 1 | 2;
  /** Push the checkpoint to the snapshot store so that other compatible nodes can restore it. */
  push: boolean;
  /** After a snapshot of the deployment is quarantined or a capture fails: wait this long, doubling. */
  failureBackoffSeconds: number;
  /** This many quarantined or failed snapshots and the deployment is not captured again. */
  maxFailures: number;
  /**
   * Tensor-parallel replicas (2+ GPUs per process group): when snapshots of this many other
   * deployments at the same degree were quarantined on a GPU model and driver, none is
   * captured there. cuda-checkpoint still fails some multi-GPU restores (NVIDIA Dynamo
   * Snapshot supports single-GPU workers only), and it fails by degree and driver, not by model.
   */
  tensorParallelQuarantineAfter: number;
}

export const DEFAULT_SNAPSHOT_CAPTURE_SETTINGS: SnapshotCaptureSettings = {
  minSpeedupFraction: 0.25,
  minSavedSeconds: 5,
  windowSeconds: 3_600,
  horizonSeconds: 24 * 3_600,
  costWeight: 1,
  sleepLevel: 2,
  push: true,
  failureBackoffSeconds: 3_600,
  maxFailures: 3,
  tensorParallelQuarantineAfter: 2,
};

/** What a snapshot is bound to: cuda-checkpoint state restores only on the same three. */
export interface SnapshotBinding {
  gpuModel: string;
  driverVersion: string;
  cudaVersion: string;
}

/** A ready replica of the deployment that could be checkpointed, and its node. */
export interface SnapshotCaptureSource {
  replicaId: string;
  node: Pick<
    SchedulingNode,
    | "id"
    | "name"
    | "state"
    | "gpuModel"
    | "driverVersion"
    | "cudaVersion"
    | "host"
    | "estargzSupported"
  >;
}

/** A snapshot of the deployment, in any status. */
export interface ExistingSnapshot extends SnapshotBinding {
  id: string;
  status: SnapshotStatus;
  /** A capture that failed (status deleted with an error), as opposed to one deleted on purpose. */
  captureFailed: boolean;
  /** When it last changed status: the backoff after a quarantine or a failure counts from here. */
  changedAt: Date;
}

export interface SnapshotCaptureInput {
  /**
   * The operator's snapshot store (THAW_SNAPSHOT_REGISTRY), or null when none is configured:
   * checkpoints never go to a tenant's registry, so without a store there are no snapshots.
   */
  snapshotStore: string | null;
  endpoint: Pick<SchedulingEndpoint, "allowedPaths">;
  deployment: SchedulingDeployment;
  sources: readonly SnapshotCaptureSource[];
  snapshots: readonly ExistingSnapshot[];
  history: (path: StartPath, locality: Locality) => HistoryForOption;
  /**
   * The deployment's tensor-parallel degree (GPUs per replica) and the org's quarantined
   * snapshots of other deployments at that degree. Absent or degree 1: no such quarantine.
   */
  tensorParallel?: {
    degree: number;
    quarantinedElsewhere: readonly (Pick<SnapshotBinding, "gpuModel" | "driverVersion"> & {
      deploymentId: string;
    })[];
  };
  /** Cold starts of the endpoint requested within settings.windowSeconds. */
  coldStartsInWindow: number;
  /** Bytes of the org's snapshots that still occupy storage, and what the org allows. */
  storage: { usedBytes: number; budgetBytes: number };
  now: Date;
  settings?: SnapshotCaptureSettings;
}

export interface SnapshotCaptureFigures {
  currentPath: StartPath;
  currentSeconds: number;
  restoreSeconds: number;
  savedSecondsPerStart: number;
  expectedStarts: number;
  captureSeconds: number;
  /** Replica-seconds the capture costs: the capture, then the restore that replaces the replica. */
  costSeconds: number;
  estimatedBytes: number;
}

export type SnapshotCaptureDecision =
  | {
      capture: true;
      reason: string;
      source: { replicaId: string; nodeId: string; nodeName: string };
      binding: SnapshotBinding;
      sleepLevel: 1 | 2;
      push: boolean;
      figures: SnapshotCaptureFigures;
    }
  | { capture: false; reason: string; figures?: SnapshotCaptureFigures };

/** A snapshot's size: the engine's host process, plus the weights when they stay in host memory. */
export function estimateSnapshotBytes(weightsBytes: number, sleepLevel: 1 | 2): number {
  return PHYSICS.engineHostProcessBytes + (sleepLevel === 1 ? weightsBytes : 0);
}

/** Checkpoint written to local disk, then pushed to the store (what the agent's capture does). */
export function predictCaptureSeconds(host: ScenarioHost, bytes: number, push: boolean): number {
  const write = bytes / (host.diskWriteMiBps * 2 ** 20);
  const upload = push ? bytes / ((host.networkGbps * 1e9) / 8) : 0;
  return write + upload;
}

const gpuDriverKey = (b: { gpuModel: string; driverVersion: string | null }) =>
  `${b.gpuModel}|${b.driverVersion ?? ""}`;

/** GPU model × driver → how many other deployments at this degree were quarantined there, past the threshold. */
function tensorParallelQuarantine(
  input: SnapshotCaptureInput,
  settings: SnapshotCaptureSettings,
): Map<string, number> {
  const tp = input.tensorParallel;
  if (!tp || tp.degree < 2) return new Map();
  const deploymentsByKey = new Map<string, Set<string>>();
  for (const s of tp.quarantinedElsewhere) {
    const key = gpuDriverKey(s);
    deploymentsByKey.set(key, (deploymentsByKey.get(key) ?? new Set()).add(s.deploymentId));
  }
  return new Map(
    [...deploymentsByKey]
      .filter(([, ids]) => ids.size >= settings.tensorParallelQuarantineAfter)
      .map(([key, ids]) => [key, ids.size]),
  );
}

export const bindingKey = (b: SnapshotBinding) =>
  `${b.gpuModel}|${b.driverVersion}|${b.cudaVersion}`;

const seconds = (value: number) => (value < 10 ? value.toFixed(1) : value.toFixed(0));
const gigabytes = (bytes: number) => `${(bytes / 1e9).toFixed(1)} GB`;

export function decideSnapshotCapture(input: SnapshotCaptureInput): SnapshotCaptureDecision {
  const settings = input.settings ?? DEFAULT_SNAPSHOT_CAPTURE_SETTINGS;
  const { deployment, now } = input;

  if (!input.snapshotStore)
    return {
      capture: false,
      reason:
        "no snapshot store is configured (THAW_SNAPSHOT_REGISTRY): checkpoints go only to a store the operator owns",
    };
  if (!input.endpoint.allowedPaths.includes("restore"))
    return { capture: false, reason: "restore is not allowed by the endpoint" };

  // A snapshot that keeps failing to restore (or to capture) wastes a replica each time:
  // wait longer after each, and give up on the deployment after a few.
  const failures = input.snapshots
    .filter((s) => s.status === "quarantined" || (s.status === "deleted" && s.captureFailed))
    .sort((a, b) => b.changedAt.getTime() - a.changedAt.getTime());
  if (failures.length >= settings.maxFailures)
    return {
      capture: false,
      reason: `${failures.length} snapshots of this deployment were quarantined or failed: not capturing it again`,
    };
  if (failures.length > 0) {
    const waitMs = settings.failureBackoffSeconds * 1000 * 2 ** (failures.length - 1);
    const until = failures[0]!.changedAt.getTime() + waitMs;
    if (now.getTime() < until)
      return {
        capture: false,
        reason: `backing off after ${failures.length} quarantined or failed snapshot(s) until ${new Date(until).toISOString()}`,
      };
  }

  const known = input.sources.filter(
    (s) => s.node.state === "ready" && !!s.node.driverVersion && !!s.node.cudaVersion,
  );
  if (known.length === 0)
    return {
      capture: false,
      reason:
        input.sources.length === 0
          ? "no ready replica to capture"
          : "no ready replica on a ready node with a known driver and CUDA version",
    };
  const taken = new Set(
    input.snapshots
      .filter((s) => s.status === "capturing" || s.status === "ready")
      .map((s) => bindingKey(s)),
  );
  const untaken = known.filter((s) => !taken.has(bindingKey(bindingOf(s))));
  if (untaken.length === 0)
    return {
      capture: false,
      reason: "a ready or capturing snapshot already exists for every GPU/driver/CUDA it runs on",
    };
  const quarantined = tensorParallelQuarantine(input, settings);
  const open = untaken.filter((s) => !quarantined.has(gpuDriverKey(s.node)));
  if (open.length === 0) {
    const { gpuModel, driverVersion } = untaken[0]!.node;
    const deployments = quarantined.get(gpuDriverKey(untaken[0]!.node));
    return {
      capture: false,
      reason: `restores at tensor-parallel ${input.tensorParallel!.degree} on ${gpuModel} driver ${driverVersion} were quarantined for ${deployments} other deployments (cuda-checkpoint fails some multi-GPU restores): not capturing there`,
    };
  }

  const estimatedBytes = estimateSnapshotBytes(deployment.engine.weightsBytes, settings.sleepLevel);
  const { usedBytes, budgetBytes } = input.storage;
  if (usedBytes + estimatedBytes > budgetBytes)
    return {
      capture: false,
      reason: `over the org's snapshot storage budget: ${gigabytes(usedBytes)} used + ${gigabytes(estimatedBytes)} > ${gigabytes(budgetBytes)}`,
    };

  const expectedStarts =
    (Math.max(0, input.coldStartsInWindow) * settings.horizonSeconds) / settings.windowSeconds;
  const scored = open.map((source) => ({
    source,
    figures: figuresFor(input, source, estimatedBytes, expectedStarts, settings),
  }));
  // The source that leaves the most seconds saved net of its cost; ties by node id so that
  // two schedulers deciding on the same state pick the same replica.
  scored.sort(
    (a, b) =>
      b.figures.savedSecondsPerStart * expectedStarts -
        b.figures.costSeconds -
        (a.figures.savedSecondsPerStart * expectedStarts - a.figures.costSeconds) ||
      a.source.node.id.localeCompare(b.source.node.id),
  );
  const best = scored[0]!;
  const f = best.figures;
  const comparison = `restore ${seconds(f.restoreSeconds)} s vs ${f.currentPath} ${seconds(f.currentSeconds)} s on ${best.source.node.name}`;
  const neededSaving = Math.max(
    settings.minSavedSeconds,
    settings.minSpeedupFraction * f.currentSeconds,
  );
  if (f.savedSecondsPerStart < neededSaving)
    return {
      capture: false,
      reason: `restore would not be faster by enough: ${comparison} (needs ${seconds(neededSaving)} s saved per start)`,
      figures: f,
    };
  const benefit = f.savedSecondsPerStart * expectedStarts;
  const ledger = `${seconds(f.savedSecondsPerStart)} s saved × ${expectedStarts.toFixed(1)} expected starts = ${seconds(benefit)} s vs ${seconds(f.costSeconds)} s to capture and replace the replica`;
  if (benefit < settings.costWeight * f.costSeconds)
    return { capture: false, reason: `not worth it yet: ${ledger} (${comparison})`, figures: f };
  return {
    capture: true,
    reason: `${comparison}; ${ledger}; ${gigabytes(estimatedBytes)} within the storage budget`,
    source: {
      replicaId: best.source.replicaId,
      nodeId: best.source.node.id,
      nodeName: best.source.node.name,
    },
    binding: bindingOf(best.source),
    sleepLevel: settings.sleepLevel,
    push: settings.push,
    figures: f,
  };
}

function bindingOf(source: SnapshotCaptureSource): SnapshotBinding {
  return {
    gpuModel: source.node.gpuModel,
    driverVersion: source.node.driverVersion ?? "",
    cudaVersion: source.node.cudaVersion ?? "",
  };
}

function figuresFor(
  input: SnapshotCaptureInput,
  source: SnapshotCaptureSource,
  estimatedBytes: number,
  expectedStarts: number,
  settings: SnapshotCaptureSettings,
): SnapshotCaptureFigures {
  const { deployment, endpoint, history } = input;
  const host = source.node.host;
  // A ready replica of the deployment on the node proves its image is in the node's content
  // store, whatever the last heartbeat's inventory said yet.
  const current: { path: StartPath; seconds: number }[] = [];
  const candidates: StartPath[] = ["pull", "lazy"];
  for (const path of candidates) {
    if (!endpoint.allowedPaths.includes(path)) continue;
    if (path === "lazy" && (!deployment.estargzDigest || !source.node.estargzSupported)) continue;
    const prediction = predictTimeToReady({
      priorSeconds: physicsPriorSeconds({ host, deployment, path, locality: "image-cached" }),
      history: history(path, "image-cached"),
    });
    current.push({ path, seconds: prediction.meanSeconds });
  }
  // Only warm and restore allowed: without a snapshot a replica cannot come up at all, so
  // what it would cost is a plain pull.
  if (current.length === 0)
    current.push({
      path: "pull",
      seconds: predictTimeToReady({
        priorSeconds: physicsPriorSeconds({ host, deployment, path: "pull", locality: "cold" }),
        history: history("pull", "cold"),
      }).meanSeconds,
    });
  const best = current.reduce((a, b) => (b.seconds < a.seconds ? b : a));
  const restoreSeconds = predictTimeToReady({
    priorSeconds: physicsPriorSeconds({
      host,
      deployment,
      path: "restore",
      locality: "snapshot-local",
      snapshot: { bytes: estimatedBytes, sleepLevel: settings.sleepLevel },
    }),
    history: history("restore", "snapshot-local"),
  }).meanSeconds;
  const captureSeconds = predictCaptureSeconds(host, estimatedBytes, settings.push);
  return {
    currentPath: best.path,
    currentSeconds: best.seconds,
    restoreSeconds,
    savedSecondsPerStart: best.seconds - restoreSeconds,
    expectedStarts,
    captureSeconds,
    costSeconds: captureSeconds + restoreSeconds,
    estimatedBytes,
  };
}
