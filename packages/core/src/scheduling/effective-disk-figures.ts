import { z } from "zod";

// Which disk a node really has. A Node row carries up to three answers: its instance type's
// published profile (always; a default gp3 root volume for the GPU types, 125 MiB/s), the data
// volume the fleet provider provisioned for it (gp3 at 1,000 MiB/s by default), and what its
// agent measured on that volume at first boot. The predictor, placement and the bottleneck
// hints all read the answer from here, so they never disagree about a host.

export const DiskFigureSource = z.enum(["measured", "provisioned", "profile"]);
export type DiskFigureSource = z.infer<typeof DiskFigureSource>;

/** How a hint names where the figure came from. */
export const DISK_FIGURE_SOURCE_TEXT: Record<DiskFigureSource, string> = {
  measured: "measured on the host",
  provisioned: "provisioned gp3",
  profile: "instance profile",
};

/** The Node columns the choice reads (a Prisma select of the same names is below). */
export interface NodeDiskColumns {
  diskReadMiBps: number;
  diskWriteMiBps: number;
  volumeThroughputMiBps: number | null;
  measuredDiskReadMiBps: number | null;
  measuredDiskWriteMiBps: number | null;
}

export const NODE_DISK_COLUMNS_SELECT = {
  diskReadMiBps: true,
  diskWriteMiBps: true,
  volumeThroughputMiBps: true,
  measuredDiskReadMiBps: true,
  measuredDiskWriteMiBps: true,
} as const satisfies Record<keyof NodeDiskColumns, true>;

export interface EffectiveDiskFigures {
  readMiBps: number;
  writeMiBps: number;
  source: DiskFigureSource;
}

const usable = (figure: number | null | undefined): figure is number =>
  figure !== null && figure !== undefined && Number.isFinite(figure) && figure > 0;

/**
 * Measured if the agent reported both directions, else the provisioned volume's throughput
 * (a gp3 volume's throughput is shared by reads and writes), else the instance profile.
 */
export function effectiveDiskFigures(node: NodeDiskColumns): EffectiveDiskFigures {
  if (usable(node.measuredDiskReadMiBps) && usable(node.measuredDiskWriteMiBps)) {
    return {
      readMiBps: node.measuredDiskReadMiBps,
      writeMiBps: node.measuredDiskWriteMiBps,
      source: "measured",
    };
  }
  if (usable(node.volumeThroughputMiBps)) {
    return {
      readMiBps: node.volumeThroughputMiBps,
      writeMiBps: node.volumeThroughputMiBps,
      source: "provisioned",
    };
  }
  return { readMiBps: node.diskReadMiBps, writeMiBps: node.diskWriteMiBps, source: "profile" };
}
