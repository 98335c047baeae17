import { type Phase } from "@thaw/core/vocabulary";
import { type EmitPhase, type PhaseAttributes, PhaseFailedError } from "./runtime.ts";

/** What a phase body may add to its event. */
export interface PhaseScope {
  attributes: PhaseAttributes;
  bytes?: number;
}

/**
 * Times phases and reports each as it ends, in order. Every timestamp is derived from one
 * wall-clock anchor plus the monotonic clock, so phases never overlap or run backwards even if
 * the system clock is stepped during a start.
 *
 * A phase may leave bookkeeping to finish in the background (`settle`: e.g. counting the bytes
 * a pull moved) while the next phase already runs: its duration ends with its body, and its
 * event is held back until the bookkeeping is done, so events are still emitted in order.
 */
export class PhaseRecorder {
  private readonly anchorPerf = performance.now();
  private readonly anchorWall = Date.now();
  private readonly slots: { event?: Parameters<EmitPhase>[0] }[] = [];
  private nextToEmit = 0;
  private readonly settling: Promise<void>[] = [];

  constructor(private readonly emit: EmitPhase) {}

  private wallAt(perf: number): string {
    return new Date(this.anchorWall + (perf - this.anchorPerf)).toISOString();
  }

  async run<T>(
    phase: Phase,
    body: (scope: PhaseScope) => Promise<T>,
    settle?: (scope: PhaseScope) => Promise<void>,
  ): Promise<T> {
    const t0 = performance.now();
    const scope: PhaseScope = { attributes: {} };
    let result: T;
    try {
      result = await body(scope);
    } catch (error) {
      if (error instanceof PhaseFailedError) throw error;
      throw new PhaseFailedError(
        phase,
        this.wallAt(t0),
        (performance.now() - t0) / 1000,
        error instanceof Error ? error.message : String(error),
        { cause: error },
      );
    }
    const t1 = performance.now();
    const slot = this.slots.push({}) - 1;
    if (!settle) {
      this.fill(slot, phase, t0, t1, scope);
    } else {
      this.settling.push(
        settle(scope)
          .catch((error: unknown) => {
            scope.attributes.settleError = error instanceof Error ? error.message : String(error);
          })
          .then(() => this.fill(slot, phase, t0, t1, scope)),
      );
    }
    return result;
  }

  /** A zero-length marker (the `ready` phase). */
  mark(phase: Phase, attributes: PhaseAttributes = {}): void {
    const now = performance.now();
    const slot = this.slots.push({}) - 1;
    this.fill(slot, phase, now, now, { attributes });
  }

  /** Waits for background bookkeeping, so that every finished phase has been emitted. */
  async flush(): Promise<void> {
    await Promise.all(this.settling);
  }

  private fill(slot: number, phase: Phase, t0: number, t1: number, scope: PhaseScope): void {
    const target = this.slots[slot];
    if (!target) return;
    target.event = {
      phase,
      startedAt: this.wallAt(t0),
      endedAt: this.wallAt(t1),
      seconds: (t1 - t0) / 1000,
      ...(scope.bytes === undefined ? {} : { bytes: scope.bytes }),
      ...(Object.keys(scope.attributes).length === 0 ? {} : { attributes: scope.attributes }),
    };
    for (let next = this.slots[this.nextToEmit]; next?.event; next = this.slots[this.nextToEmit]) {
      this.nextToEmit++;
      this.emit(next.event);
    }
  }
}
