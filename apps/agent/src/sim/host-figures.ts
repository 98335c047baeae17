import { HOST_PROFILES, type HostProfile } from "@thaw/core/cold-start-model";
import type { HostFigures } from "@thaw/protocol";

/** Driver and CUDA a simulated host reports; snapshots are bound to them. */
const SIM_DRIVER_VERSION = "570.133.20";
const SIM_CUDA_VERSION = "12.8";

/**
 * A simulated host's data volume: gp3 provisioned at this throughput, as the fleet provider
 * attaches to an EC2 host (dataVolume). Absent: the instance profile's disk (a default gp3
 * root volume, 125 MiB/s, on the GPU types).
 */
export interface SimDataVolume {
  throughputMiBps: number;
}

/**
 * What a host of this instance type reports at join and in heartbeats from its published
 * profile: the figures the cold-start model runs on. A containerd host reports these (its
 * disk measured separately); a simulated one reports simHostFigures.
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
    memoryGiB: profile.memoryGiB,
    networkGbps: profile.registryNetworkGbps,
    diskReadMiBps: profile.disk.readMiBps,
    diskWriteMiBps: profile.disk.writeMiBps,
    pcieGBps: profile.pcieGBps,
    registryRttMs: profile.registryRttMs,
    driverVersion: SIM_DRIVER_VERSION,
    cudaVersion: SIM_CUDA_VERSION,
  };
}

/** How a simulated host restores snapshots (THAW_SIM_RESTORE_STREAMS, THAW_SIM_GPU_MEMORY_SERVICE). */
export interface SimRestoreFigures {
  restoreStreams?: number;
  gpuMemoryService?: boolean;
}

/**
 * What a simulated host reports: its type's published figures, and as its measured disk the
 * disk it simulates (no probe: a probe of the simulated disk would find exactly that).
 */
export function simHostFigures(
  instanceType: string,
  volume: SimDataVolume | undefined,
  bootedAt: Date,
  restore: SimRestoreFigures = {},
): HostFigures {
  const { disk } = simHostProfile(instanceType, volume);
  const profile = hostProfileFor(instanceType);
  return {
    ...hostFiguresFor(instanceType),
    restoreStreams: restore.restoreStreams ?? 1,
    // A simulated host has its type's fabric, and its engines send and receive peer copies.
    ...(profile.rdmaGbps > 0 ? { rdmaGbps: profile.rdmaGbps } : {}),
    peerTransfer: true,
    ...(restore.gpuMemoryService ? { gpuMemoryService: true } : {}),
    measuredDisk: {
      readMiBps: disk.readMiBps,
      writeMiBps: disk.writeMiBps,
      measuredAt: bootedAt.toISOString(),
    },
  };
}

/**
 * The profile a simulated host runs the cold-start model on: its type's, with the data volume
 * in place of the default disk. Instance-store types keep their NVMe (the fleet provider
 * attaches no volume to them).
 */
export function simHostProfile(
  instanceType: string,
  volume: SimDataVolume | undefined,
): HostProfile {
  const profile = hostProfileFor(instanceType);
  if (!volume || profile.disk.kind !== "gp3") return profile;
  // A gp3 volume's throughput is shared by reads and writes; one reader's stream stays the
  // network-attached figure.
  return {
    ...profile,
    disk: {
      ...profile.disk,
      readMiBps: volume.throughputMiBps,
      writeMiBps: volume.throughputMiBps,
    },
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
