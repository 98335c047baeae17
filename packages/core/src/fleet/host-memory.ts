import type { HostFigures } from "@thaw/protocol";

/** The Node row's host memory, from the figures' GiB (null: the agent reports none). */
export function memoryBytesOf(figures: Pick<HostFigures, "memoryGiB">): bigint | null {
  return figures.memoryGiB === undefined ? null : BigInt(figures.memoryGiB) * 2n ** 30n;
}
