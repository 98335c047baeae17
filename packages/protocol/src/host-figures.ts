import { z } from "zod";
import { boundedFigure } from "./bounded.ts";
import { plainText } from "./plain-text.ts";

/**
 * Sequential direct-I/O throughput the agent measured on its data disk (a short probe at first
 * boot, cached across restarts); a simulated host reports its simulated disk. The control
 * plane prefers it to the instance profile's figures (core's effectiveDiskFigures).
 */
export const MeasuredDisk = z
  .object({
    readMiBps: boundedFigure(1_000_000),
    writeMiBps: boundedFigure(1_000_000),
    measuredAt: z.iso.datetime(),
  })
  .strict();
export type MeasuredDisk = z.infer<typeof MeasuredDisk>;

/**
 * What a host can do, measured or from its instance profile: sent at join and with
 * heartbeats, stored on its Node row, read by placement, the cold-start model and the
 * dashboard's bottleneck hints.
 */
export const HostFigures = z
  .object({
    instanceType: plainText(64),
    gpuModel: plainText(64),
    gpuCount: z.number().int().min(0).max(64),
    gpuMemoryGiB: z.number().int().min(0).max(4096),
    vcpus: z.number().int().min(1).max(1024),
    /** Host RAM: what sleeping engines may hold. Absent: not reported (an older agent). */
    memoryGiB: z.number().int().min(1).max(65_536).optional(),
    /**
     * Workers the host's CRIU restores a checkpoint's memory pages with: 1 for stock CRIU,
     * more for a build with parallel memfd restore. Absent: 1 (an older agent).
     */
    restoreStreams: z.number().int().min(1).max(256).optional(),
    /**
     * The host runs a GPU Memory Service for its engines' weights (see the scenario's
     * `host.gpuMemoryService`). Absent: false.
     */
    gpuMemoryService: z.boolean().optional(),
    /**
     * The host's RDMA fabric (EFA with GPUDirect RDMA) per GPU, Gbps (see the scenario's
     * `host.rdmaGbps`). Absent: none.
     */
    rdmaGbps: boundedFigure(10_000).optional(),
    /**
     * The host's engines can send and receive weights and kernel caches through the
     * operator's ModelExpress server (the peer path). Absent: false.
     */
    peerTransfer: z.boolean().optional(),
    networkGbps: boundedFigure(10_000),
    diskReadMiBps: boundedFigure(1_000_000),
    diskWriteMiBps: boundedFigure(1_000_000),
    pcieGBps: boundedFigure(1_000),
    registryRttMs: boundedFigure(10_000),
    driverVersion: plainText(32).optional(),
    cudaVersion: plainText(32).optional(),
    /** Absent: not measured (an older agent, the probe off or failed). */
    measuredDisk: MeasuredDisk.optional(),
  })
  .strict();
export type HostFigures = z.infer<typeof HostFigures>;
