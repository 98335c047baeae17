import { PHYSICS } from "../cold-start-model/index.ts";

// Whether a replica the warm pool lets go may sleep on its node instead of stopping, and at
// which level: host memory is the resource a sleeping engine holds (its process, and at
// level 1 a pinned copy of its weights), so placement of sleepers never over-commits it.

/** Share of a node's memory kept for the OS, the page cache and the agent, never for sleepers. */
export const HOST_MEMORY_RESERVE_FRACTION = 0.1;

/** Host memory a sleeping engine holds: its process, and at level 1 its weights' backup. */
export function sleepingEngineBytes(weightsBytes: number, sleepLevel: 1 | 2): number {
  return PHYSICS.engineHostProcessBytes + (sleepLevel === 1 ? weightsBytes : 0);
}

/**
 * What sleeping engines may hold on a node: its memory less the reserve and the processes of
 * the engines that may serve on its GPUs (one each).
 */
export function sleepBudgetBytes(memoryBytes: number, gpuCount: number): number {
  return Math.max(
    0,
    memoryBytes * (1 - HOST_MEMORY_RESERVE_FRACTION) - gpuCount * PHYSICS.engineHostProcessBytes,
  );
}

/**
 * The level a replica sleeps at on this node: 1 (its weights kept in memory) if that fits
 * beside the engines already asleep there, else 2 (weights dropped, read again on wake), else
 * null: it stops.
 */
export function chooseSleepLevel(input: {
  memoryBytes: number | null;
  gpuCount: number;
  /** Host memory the node's sleeping engines hold now. */
  sleepingBytes: number;
  weightsBytes: number;
}): { sleepLevel: 1 | 2; bytes: number } | null {
  if (input.memoryBytes === null) return null;
  const room = sleepBudgetBytes(input.memoryBytes, input.gpuCount) - input.sleepingBytes;
  for (const sleepLevel of [1, 2] as const) {
    const bytes = sleepingEngineBytes(input.weightsBytes, sleepLevel);
    if (bytes <= room) return { sleepLevel, bytes };
  }
  return null;
}
