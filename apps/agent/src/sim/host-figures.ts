import { HOST_PROFILES, type HostProfile } from "@thaw/core/cold-start-model";
import type { HostFigures } from "@thaw/protocol";

/** Driver and CUDA a simulated host reports; snapshots are bound to them. */
const SIM_DRIVER_VERSION = "570.133.20";
const SIM_CUDA_VERSION = "12.8";

/**
 * What a simulated host of this instance type reports at join and in heartbeats: the
 * published figures of the type (the same profile the cold-start model runs on).
 */
export function hostFiguresFor(instanceType: string): HostFigures {
  const profile = hostProfileFor(instanceType);
  return {
    instanceType: profile.instanceType,
    // Endpoints name GPUs by their short model ("A10G", "L40S").
    gpuModel: profile.gpu ? profile.gpu.model.replace(/^NVIDIA /, "") : "none",
    gpuCount: profile.gpu?.count ?? 0,
    gpuMemoryGiB: profile.gpu?.memoryGiB ?? 0,
    vcpus: profile.vcpus,
    networkGbps: profile.registryNetworkGbps,
    diskReadMiBps: profile.disk.readMiBps,
    diskWriteMiBps: profile.disk.writeMiBps,
    pcieGBps: profile.pcieGBps,
    registryRttMs: profile.registryRttMs,
    driverVersion: SIM_DRIVER_VERSION,
    cudaVersion: SIM_CUDA_VERSION,
  };
}

/** The published profile of an instance type; throws naming the known ones. */
export function hostProfileFor(instanceType: string): HostProfile {
  const profile = (HOST_PROFILES as Record<string, HostProfile>)[instanceType];
  if (!profile) {
    throw new Error(
      `unknown sim instance type '${instanceType}'; known: ${Object.keys(HOST_PROFILES).join(", ")}`,
    );
  }
  return profile;
}
