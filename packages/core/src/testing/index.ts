// Fixtures shared by the integration tests of core, web and the scheduler (never imported by
// product code): what a g5.xlarge host reports at join, and an idle host's heartbeat.

/** A g5.xlarge (one A10G) as its agent reports it at join. */
export const G5_XLARGE_JOIN_FIGURES = {
  instanceType: "g5.xlarge",
  gpuModel: "A10G",
  gpuCount: 1,
  gpuMemoryGiB: 24,
  vcpus: 4,
  networkGbps: 10,
  diskReadMiBps: 1000,
  diskWriteMiBps: 125,
  pcieGBps: 12,
  registryRttMs: 3,
};

/** The heartbeat of a one-GPU host that holds nothing. */
export const IDLE_HEARTBEAT = {
  agentVersion: "test",
  gpusFree: 1,
  gpusUsed: 0,
  inventory: { images: [], snapshotIds: [], warmReplicaIds: [] },
};
