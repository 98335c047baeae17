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
 * Where a replica sleeps on this node, and what must wake up for it (evicted: stopped): level 1
 * (its weights kept in memory) if that fits in the node's budget at all, making room by
 * evicting the engines asleep longest (least recently used first), else level 2 (weights
 * dropped, read again on wake) the same way, else null: it stops. bench:replay's sleeping
 * policy is this same rule.
 */
export function planSleep<S extends { bytes: number }>(input: {
  memoryBytes: number | null;
  gpuCount: number;
  /** The engines asleep on the node now, longest asleep first. */
  sleepers: readonly S[];
  weightsBytes: number;
}): { sleepLevel: 1 | 2; bytes: number; evict: S[] } | null {
  if (input.memoryBytes === null) return null;
  const budget = sleepBudgetBytes(input.memoryBytes, input.gpuCount);
  let held = 0;
  for (const s of input.sleepers) held += s.bytes;
  for (const sleepLevel of [1, 2] as const) {
    const bytes = sleepingEngineBytes(input.weightsBytes, sleepLevel);
    if (bytes > budget) continue;
    const evict: S[] = [];
    let left = held;
    for (const s of input.sleepers) {
      if (left + bytes <= budget) break;
      evict.push(s);
      left -= s.bytes;
    }
    return { sleepLevel, bytes, evict };
  }
  return null;
}
