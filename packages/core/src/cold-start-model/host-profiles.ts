import type { ScenarioHost } from "./scenario-schema";

// Published figures of the EC2 instance types Thaw runs on, and the one translation that
// matters: which of them bound a cold start. Sources: the EC2 instance-type pages
// (accelerated computing, network optimized), the EBS volume-type page, NVIDIA data sheets.

export interface DiskProfile {
  /** gp3: the EBS root volume containerd writes to by default; local-nvme: instance store in RAID 0. */
  kind: "gp3" | "local-nvme";
  readMiBps: number;
  writeMiBps: number;
  /** One synchronous sequential reader (readahead in flight / device latency). */
  readStreamMiBps: number;
}

export interface HostProfile {
  instanceType: string;
  gpu: { model: string; memoryGiB: number; count: number } | null;
  vcpus: number;
  memoryGiB: number;
  /** Published instance bandwidth ("up to" figures are burst). */
  networkGbps: number;
  /** What a pull from a registry / object store can use; see the p4d/p5 notes. */
  registryNetworkGbps: number;
  /** The EFA fabric (GPUDirect RDMA) per GPU; 0: none, peers copy over TCP. */
  rdmaGbps: number;
  disk: DiskProfile;
  /** Pinned host -> GPU copy bandwidth per GPU, practical; 0 = no GPU. */
  pcieGBps: number;
  /** Same-region registry round trip (field notes: ~3 ms). */
  registryRttMs: number;
}

/** gp3 baseline: 125 MiB/s and 3,000 IOPS whatever the size; reads and writes share it. */
const GP3_DEFAULT: DiskProfile = {
  kind: "gp3",
  readMiBps: 125,
  writeMiBps: 125,
  // A single reader on EBS reaches ~300-340 MB/s (Run:ai streamer at concurrency 1 on gp3
  // and io2); below the 125 MiB/s ceiling it is the ceiling that binds.
  readStreamMiBps: 320,
};

/** Local NVMe read by one sequential reader: ~1 GB/s (vLLM loads 6 GB in 5.66 s, field notes §3). */
const NVME_STREAM_MIBPS = 1000;
/**
 * One sequential reader of an md RAID 0 spans its members (md sets the array's readahead to
 * at least two full stripes), as the field notes' RAID 0 row models for 4 gp3 volumes.
 */
const raid0StreamMiBps = (members: number, memberStreamMiBps: number) =>
  members * memberStreamMiBps;

/** PCIe Gen4 x16 pinned host-to-device copies reach ~25 GB/s of the 31.5 GB/s link. */
const PCIE_GEN4_X16_GBPS = 25;
/** PCIe Gen5 x16 (H100 SXM5 host link): ~50 GB/s practical of 63 GB/s. */
const PCIE_GEN5_X16_GBPS = 50;

const SAME_REGION_REGISTRY_RTT_MS = 3;

export const HOST_PROFILES = {
  "g5.xlarge": {
    instanceType: "g5.xlarge",
    gpu: { model: "NVIDIA A10G", memoryGiB: 24, count: 1 },
    vcpus: 4,
    memoryGiB: 16,
    networkGbps: 10,
    registryNetworkGbps: 10,
    // Has a 250 GB instance-store NVMe, but containerd's root stays on the EBS root volume
    // unless someone moves it; the default is what an unconfigured node does.
    rdmaGbps: 0,
    disk: GP3_DEFAULT,
    pcieGBps: PCIE_GEN4_X16_GBPS,
    registryRttMs: SAME_REGION_REGISTRY_RTT_MS,
  },
  "g6e.xlarge": {
    instanceType: "g6e.xlarge",
    gpu: { model: "NVIDIA L40S", memoryGiB: 48, count: 1 },
    vcpus: 4,
    memoryGiB: 32,
    networkGbps: 20,
    registryNetworkGbps: 20,
    rdmaGbps: 0,
    disk: GP3_DEFAULT,
    pcieGBps: PCIE_GEN4_X16_GBPS,
    registryRttMs: SAME_REGION_REGISTRY_RTT_MS,
  },
  "p4d.24xlarge": {
    instanceType: "p4d.24xlarge",
    gpu: { model: "NVIDIA A100 40GB", memoryGiB: 40, count: 8 },
    vcpus: 96,
    memoryGiB: 1152,
    networkGbps: 400,
    // 400 Gbps is four 100 Gbps network cards (EFA); IP traffic to a registry leaves through
    // the primary interface, so one card's 100 Gbps is what a pull can use.
    registryNetworkGbps: 100,
    // 8 x 1 TB NVMe instance store striped (RAID 0) for containerd and the model cache.
    // 4 EFA cards of 100 Gbps (GPUDirect RDMA) for 8 GPUs.
    rdmaGbps: 400 / 8,
    disk: {
      kind: "local-nvme",
      readMiBps: 16_000,
      writeMiBps: 8_000,
      readStreamMiBps: raid0StreamMiBps(8, NVME_STREAM_MIBPS),
    },
    pcieGBps: PCIE_GEN4_X16_GBPS,
    registryRttMs: SAME_REGION_REGISTRY_RTT_MS,
  },
  "p5.48xlarge": {
    instanceType: "p5.48xlarge",
    gpu: { model: "NVIDIA H100 80GB", memoryGiB: 80, count: 8 },
    vcpus: 192,
    memoryGiB: 2048,
    networkGbps: 3200,
    // 3,200 Gbps is 32 EFA interfaces for GPU-to-GPU RDMA (NCCL). A registry pull is plain
    // TCP over the primary ENA interface: 100 Gbps, so that is what the model gets.
    registryNetworkGbps: 100,
    // 8 x 3.84 TB NVMe instance store striped (RAID 0).
    // 32 EFA cards of 100 Gbps for 8 GPUs: 400 Gbps per GPU.
    rdmaGbps: 3200 / 8,
    disk: {
      kind: "local-nvme",
      readMiBps: 24_000,
      writeMiBps: 12_000,
      readStreamMiBps: raid0StreamMiBps(8, NVME_STREAM_MIBPS),
    },
    pcieGBps: PCIE_GEN5_X16_GBPS,
    registryRttMs: SAME_REGION_REGISTRY_RTT_MS,
  },
  "m6in.2xlarge": {
    instanceType: "m6in.2xlarge",
    gpu: null,
    vcpus: 8,
    memoryGiB: 32,
    networkGbps: 40,
    registryNetworkGbps: 40,
    rdmaGbps: 0,
    disk: GP3_DEFAULT,
    pcieGBps: 0,
    registryRttMs: SAME_REGION_REGISTRY_RTT_MS,
  },
} as const satisfies Record<string, HostProfile>;

export type HostProfileName = keyof typeof HOST_PROFILES;

/** The scenario `host` block a node of this type presents to the model. */
export function scenarioHostFromProfile(profile: HostProfile): ScenarioHost {
  return {
    vcpus: profile.vcpus,
    networkGbps: profile.registryNetworkGbps,
    registryRttMs: profile.registryRttMs,
    diskWriteMiBps: profile.disk.writeMiBps,
    diskReadMiBps: profile.disk.readMiBps,
    diskReadStreamMiBps: profile.disk.readStreamMiBps,
    pcieGBps: profile.pcieGBps,
    memoryGiB: profile.memoryGiB,
    ...(profile.rdmaGbps > 0 ? { rdmaGbps: profile.rdmaGbps } : {}),
  };
}
