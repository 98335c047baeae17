import { type AgentErrorCode } from "@thaw/protocol";

/** Why a replica cannot hold the GPUs it asked for. */
export interface GpuRefusal {
  code: AgentErrorCode;
  message: string;
}

/** One GPU and the replica holding it. */
export interface HeldGpu {
  index: number;
  replicaId: string;
}

/**
 * Which replica holds each GPU of the host. A GPU is held from the moment a start is accepted
 * until the replica fails, stops or is captured; a warm handover passes the parked replica's
 * GPUs to the replica taking over.
 */
export class GpuLedger {
  /** GPU index → replica holding it. */
  private readonly holders = new Map<number, string>();

  constructor(readonly total: number) {}

  get used(): number {
    return this.holders.size;
  }

  get free(): number {
    return Math.max(0, this.total - this.holders.size);
  }

  /**
   * Why `replicaId` cannot hold `gpus`, or undefined when it can: each must exist and be free,
   * or already held by the replica itself or by the parked one it takes over from.
   */
  refusal(
    gpus: readonly number[],
    replicaId: string,
    handoverFrom: string | undefined,
  ): GpuRefusal | undefined {
    for (const gpu of gpus) {
      if (gpu >= this.total) {
        return {
          code: "gpu_unavailable",
          message: `GPU ${gpu} does not exist on this host (${this.total} GPUs)`,
        };
      }
      const holder = this.holders.get(gpu);
      if (holder !== undefined && holder !== handoverFrom && holder !== replicaId) {
        return { code: "gpu_busy", message: `GPU ${gpu} is held by replica ${holder}` };
      }
    }
    return undefined;
  }

  hold(replicaId: string, gpus: readonly number[]): void {
    for (const gpu of gpus) this.holders.set(gpu, replicaId);
  }

  /** Frees the GPUs among `gpus` that `replicaId` still holds (not those passed on since). */
  release(replicaId: string, gpus: readonly number[]): void {
    for (const gpu of gpus) {
      if (this.holders.get(gpu) === replicaId) this.holders.delete(gpu);
    }
  }

  /** Every held GPU, by index. */
  held(): HeldGpu[] {
    return [...this.holders]
      .map(([index, replicaId]) => ({ index, replicaId }))
      .sort((a, b) => a.index - b.index);
  }
}
