import type { ScenarioHost } from "../cold-start-model/scenario-schema.ts";
import {
  effectiveDiskFigures,
  NODE_DISK_COLUMNS_SELECT,
  type NodeDiskColumns,
} from "./effective-disk-figures.ts";

// The cold-start model's `host` block for a Node row: what placement's predictions, the
// snapshot capture's choice and the what-if replay all price a start on that host with.

/** The Node columns the host block reads (a Prisma select of the same names is below). */
export interface NodeHostColumns extends NodeDiskColumns {
  vcpus: number;
  networkGbps: number;
  registryRttMs: number;
  pcieGBps: number;
  /** Host RAM as the agent reports it; null: not reported (the model assumes a host). */
  memoryBytes: bigint | number | null;
  /** CRIU's page-restore workers as the agent reports them (null: 1, an older agent). */
  restoreStreams?: number | null;
  /** The host's engines keep their weights in a GPU Memory Service (agent-reported). */
  gpuMemoryService?: boolean;
  /** The host's RDMA fabric per GPU (agent-reported; 0: none). */
  rdmaGbps?: number;
}

export const NODE_HOST_COLUMNS_SELECT = {
  ...NODE_DISK_COLUMNS_SELECT,
  vcpus: true,
  networkGbps: true,
  registryRttMs: true,
  pcieGBps: true,
  memoryBytes: true,
  restoreStreams: true,
  gpuMemoryService: true,
  rdmaGbps: true,
} as const satisfies Record<keyof NodeHostColumns, true>;

const GIB = 1024 ** 3;

export function nodeScenarioHost(node: NodeHostColumns): ScenarioHost {
  const disk = effectiveDiskFigures(node);
  const memoryBytes = node.memoryBytes === null ? 0 : Number(node.memoryBytes);
  return {
    vcpus: node.vcpus,
    networkGbps: node.networkGbps,
    registryRttMs: node.registryRttMs,
    diskWriteMiBps: disk.writeMiBps,
    diskReadMiBps: disk.readMiBps,
    pcieGBps: node.pcieGBps,
    ...(memoryBytes > 0 ? { memoryGiB: memoryBytes / GIB } : {}),
    ...(node.restoreStreams ? { restoreStreams: node.restoreStreams } : {}),
    ...(node.gpuMemoryService ? { gpuMemoryService: true } : {}),
    ...(node.rdmaGbps ? { rdmaGbps: node.rdmaGbps } : {}),
  };
}
