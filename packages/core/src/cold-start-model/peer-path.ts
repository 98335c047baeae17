import { hostRates, type HostRates } from "./engine-phases";
import { planImage } from "./image-reads";
import { lazyPhases } from "./lazy-path";
import { PHYSICS, type Physics } from "./physical-constants";
import { pullPhases } from "./pull-path";
import {
  parseColdStartScenario,
  type ColdStartScenario,
  type ColdStartScenarioInput,
  type PhaseTiming,
} from "./scenario-schema";

// Peer: a serving replica of the same deployment on another host sends what it holds (NVIDIA
// ModelExpress over NIXL). The new host still fetches the image it runs, but the engine reads
// none of its weights from it or from storage: it starts with its weights' device memory
// allocated and the source writes them there, GPU to GPU over RDMA where both hosts have a
// fabric, else over TCP through both hosts' memory. The source then sends its compiled-kernel
// caches, so compile and graph capture run warm. ModelExpress found weights alone cut
// time-to-ready 1.1×, weights and caches 4.6×: the caches are most of the win.

export function peerPhases(
  scenario: ColdStartScenario,
  rates: HostRates,
  physics: Physics,
): PhaseTiming[] {
  const { peer } = scenario;
  const imagePhases = peerImagePhases(scenario, rates, physics);
  const caches = peer.kernelCaches;
  const cacheBytes = caches ? (peer.kernelCacheBytes ?? physics.defaultKernelCacheBytes) : 0;
  const received: PhaseTiming[] = [
    peerWeightsTiming(scenario, rates, physics),
    ...(caches
      ? [
          {
            phase: "fetch_kernel_cache" as const,
            // Files, not device memory: over TCP whatever the fabric, into the host's cache dir.
            seconds:
              rates.rttSeconds + cacheBytes / tcpLinkBytesPerSecond(scenario, rates, physics),
            bytes: cacheBytes,
          },
        ]
      : []),
  ];
  // The received bytes replace the weight load, before compile (which needs the caches).
  return imagePhases.flatMap((timing) => (timing.phase === "load_weights" ? received : [timing]));
}

/**
 * The weights written into the engine's device memory by the source (a new engine's, or a
 * restored one's after its wake): the NIXL agents' setup, then the copy over the link.
 */
export function peerWeightsTiming(
  scenario: Pick<ColdStartScenario, "host" | "peer" | "engine">,
  rates: HostRates,
  physics: Physics,
): PhaseTiming {
  const weightsBytes = scenario.engine.weightsBytes;
  return {
    phase: "peer_transfer",
    seconds:
      weightsBytes > 0
        ? physics.peerSetupSeconds + weightsBytes / peerLinkBytesPerSecond(scenario, rates, physics)
        : 0,
    bytes: weightsBytes,
  };
}

/**
 * The image's phases up to the engine's own (with no weight load: they come from the peer).
 * The engine reads only its code from the image. A plain image is pulled whole (containerd
 * unpacks every layer in chain order), weights layers and all. An `estargz` scenario image
 * means the deployment also has an eStargz variant the host can mount: its weights layers are
 * then never fetched, but the code is read lazily; the faster of the two is taken, and the
 * agent is told which (peerMountsEstargz).
 */
function peerImagePhases(
  scenario: ColdStartScenario,
  rates: HostRates,
  physics: Physics,
): PhaseTiming[] {
  const plain = peerImageModePhases(scenario, "oci", rates, physics);
  if (scenario.image.format !== "estargz") return plain;
  const lazy = peerImageModePhases(scenario, "estargz", rates, physics);
  return totalSeconds(lazy) < totalSeconds(plain) ? lazy : plain;
}

function peerImageModePhases(
  scenario: ColdStartScenario,
  format: "oci" | "estargz",
  rates: HostRates,
  physics: Physics,
): PhaseTiming[] {
  const { engine, peer } = scenario;
  const image = { ...scenario.image, format };
  const full = planImage(image, engine, physics);
  const totalBytes = full.layers.reduce((sum, layer) => sum + layer.bytes, 0);
  const codeImage =
    format === "estargz" && full.weightsInImage
      ? codeLayersOnly(image, full.codeReadBytes)
      : { ...image, readFraction: totalBytes > 0 ? full.codeReadBytes / totalBytes : 0 };
  const codeScenario: ColdStartScenario = {
    ...scenario,
    image: codeImage,
    engine: { ...engine, weightsBytes: 0, warmCaches: engine.warmCaches || peer.kernelCaches },
  };
  const codePlan = planImage(codeImage, codeScenario.engine, physics);
  return format === "estargz"
    ? lazyPhases(codeScenario, codePlan, rates, physics)
    : pullPhases(codeScenario, codePlan, rates, physics);
}

/**
 * Whether a peer start of this scenario mounts the eStargz variant (its image is `estargz`:
 * the deployment has one) rather than pulling the plain image: the model's own choice, which
 * the control plane passes on to the agent.
 */
export function peerMountsEstargz(
  input: ColdStartScenarioInput,
  physics: Physics = PHYSICS,
): boolean {
  const scenario = parseColdStartScenario({ ...input, path: "peer", noise: false });
  if (scenario.image.format !== "estargz") return false;
  const rates = hostRates(scenario.host, physics);
  return (
    totalSeconds(peerImageModePhases(scenario, "estargz", rates, physics)) <
    totalSeconds(peerImageModePhases(scenario, "oci", rates, physics))
  );
}

const totalSeconds = (phases: readonly PhaseTiming[]) =>
  phases.reduce((sum, timing) => sum + timing.seconds, 0);

/** The image's code layers alone, read as the whole image would read them. */
function codeLayersOnly(
  image: ColdStartScenario["image"],
  codeReadBytes: number,
): ColdStartScenario["image"] {
  const layers = image.layers.filter((layer) => layer.content !== "weights");
  const codeBytes = layers.reduce((sum, layer) => sum + layer.bytes, 0);
  return {
    ...image,
    layers,
    readFraction: codeBytes > 0 ? Math.min(1, codeReadBytes / codeBytes) : 0,
  };
}

/**
 * What one peer copy of the weights gets: over RDMA when both hosts have a fabric (GPUDirect:
 * each GPU's shard crosses its own rail, read and written across each side's PCIe), else over
 * TCP between the hosts' primary interfaces, staged through both hosts' memory. The source's
 * links are shared with the other copies it is sending.
 */
export function peerLinkBytesPerSecond(
  scenario: Pick<ColdStartScenario, "host" | "peer">,
  rates: HostRates,
  physics: Physics,
): number {
  const { host, peer } = scenario;
  const share = 1 / (1 + peer.sourceTransfersInFlight);
  const receiverRdma = host.rdmaGbps ?? 0;
  const pcie = pcieBytesPerSecond(scenario, rates);
  if (receiverRdma > 0 && peer.sourceRdmaGbps > 0) {
    const railBytesPerSecond =
      ((Math.min(receiverRdma, peer.sourceRdmaGbps * share) * 1e9) / 8) *
      physics.rdmaGoodputFraction;
    return peer.gpus * Math.min(railBytesPerSecond, pcie);
  }
  return Math.min(tcpLinkBytesPerSecond(scenario, rates, physics), peer.gpus * pcie);
}

/** A TCP copy between the two hosts: both interfaces, the source's shared, and the flows' caps. */
function tcpLinkBytesPerSecond(
  scenario: Pick<ColdStartScenario, "host" | "peer">,
  rates: HostRates,
  physics: Physics,
): number {
  const { host, peer } = scenario;
  const sourceNicBytesPerSecond =
    (((peer.sourceNetworkGbps ?? host.networkGbps) * 1e9) / 8) * physics.nicGoodputFraction;
  return Math.min(
    rates.nicBytesPerSecond,
    sourceNicBytesPerSecond / (1 + peer.sourceTransfersInFlight),
    physics.peerTcpFlows * physics.tcpFlowBytesPerSecond,
  );
}

/** One GPU's host link, the slower side's (a host without a GPU does not bound it). */
function pcieBytesPerSecond(
  scenario: Pick<ColdStartScenario, "host" | "peer">,
  rates: HostRates,
): number {
  const sourcePcie = (scenario.peer.sourcePcieGBps ?? scenario.host.pcieGBps) * 1e9;
  const bounds = [rates.pcieBytesPerSecond, sourcePcie].filter((rate) => rate > 0);
  return bounds.length > 0 ? Math.min(...bounds) : Number.POSITIVE_INFINITY;
}
