import type { HostFigures } from "@thaw/protocol";

/**
 * The Node columns a join or heartbeat writes for the disk the agent measured. Nothing when
 * it reported none: a host keeps its last measurement (the agent caches it, and an agent
 * restarted with the probe off still has the same disk).
 */
export function measuredDiskColumns(figures: Pick<HostFigures, "measuredDisk">) {
  const measured = figures.measuredDisk;
  if (!measured) return {};
  return {
    measuredDiskReadMiBps: measured.readMiBps,
    measuredDiskWriteMiBps: measured.writeMiBps,
    diskMeasuredAt: new Date(measured.measuredAt),
  };
}
