import {
  physicsPriorSeconds,
  predictTimeToReady,
  type HistoryForOption,
  type TimeToReadyPrediction,
} from "./predict-time-to-ready";
import type {
  Locality,
  SchedulingDeployment,
  SchedulingNode,
  SchedulingSnapshot,
  StartOption,
} from "./start-option";
import type { StartPath } from "../vocabulary/index";

/**
 * A start option's prediction, for every caller that weighs a deployment's options: placement's
 * batch, the warm pool's best non-warm start, the endpoint page's paths. It depends on the
 * node's figures, the path, the locality, the snapshot and the sleeper's level only (not on
 * the node's load), and nodes of one instance type share their figures: each distinct option
 * is simulated once per predictor, not once per node (a fleet of one instance type is one
 * physics run per path and locality, however many nodes it has).
 */
export function optionPredictor(
  deployment: SchedulingDeployment,
  snapshots: readonly SchedulingSnapshot[],
  history: (path: StartPath, locality: Locality) => HistoryForOption,
): (node: SchedulingNode, option: StartOption) => TimeToReadyPrediction {
  const snapshotsById = new Map(snapshots.map((s) => [s.id, s]));
  const predictions = new Map<string, TimeToReadyPrediction>();
  const hostKeys = new Map<SchedulingNode["host"], string>();
  return (node, option) => {
    let hostKey = hostKeys.get(node.host);
    if (hostKey === undefined) {
      hostKey = JSON.stringify(node.host);
      hostKeys.set(node.host, hostKey);
    }
    const key = `${hostKey}|${option.path}|${option.locality}|${option.snapshotId ?? ""}|${option.sleepingReplica?.sleepLevel ?? ""}|${option.stageWeights ? "staged" : ""}|${peerKey(option)}|${option.kernelCache?.bytes ?? ""}`;
    let prediction = predictions.get(key);
    if (prediction === undefined) {
      const snapshot = option.snapshotId ? snapshotsById.get(option.snapshotId) : undefined;
      prediction = predictTimeToReady({
        priorSeconds: physicsPriorSeconds({
          host: node.host,
          deployment,
          path: option.path,
          locality: option.locality,
          ...(snapshot ? { snapshot } : {}),
          ...(option.sleepingReplica ? { sleeping: option.sleepingReplica } : {}),
          ...(option.stageWeights ? { stageWeights: true } : {}),
          ...(option.kernelCache ? { kernelCacheBytes: option.kernelCache.bytes } : {}),
          ...(option.peerSource
            ? {
                peerSource: option.peerSource,
                gpus: option.gpusToReserve,
                ...(option.peerLazyImage ? { peerLazyImage: true } : {}),
              }
            : {}),
        }),
        history: history(option.path, option.locality),
      });
      predictions.set(key, prediction);
    }
    return prediction;
  };
}

/** What of a peer source changes the prediction: its host's link figures and its load. */
function peerKey(option: StartOption): string {
  const source = option.peerSource;
  if (!source) return "";
  const { networkGbps, rdmaGbps, pcieGBps } = source.host;
  return `${option.path}/${networkGbps}/${rdmaGbps ?? 0}/${pcieGBps}/${source.transfersInFlight}/${option.gpusToReserve}/${option.peerLazyImage ? "esgz" : "oci"}`;
}
