// One loop heartbeats every host of the process: each host is due once per interval, the
// hosts spread evenly over it (no thundering herd of 1,000 requests every 5 s), and at most
// `maxConcurrent` join/heartbeat calls are in flight. One timer for the whole fleet.

export interface Beating {
  readonly name: string;
  tick(): Promise<void>;
}

export interface HeartbeatLoopOptions {
  intervalMs: number;
  /** How often the loop looks for due hosts. */
  resolutionMs?: number;
  maxConcurrent?: number;
  /** Called after each host's tick (for status logging). */
  afterTick?: (host: Beating) => void;
  now?: () => number;
}

interface Slot {
  host: Beating;
  dueAt: number;
  running: Promise<void> | undefined;
}

export class HeartbeatLoop {
  private readonly slots: Slot[];
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  private readonly now: () => number;

  constructor(
    hosts: readonly Beating[],
    private readonly options: HeartbeatLoopOptions,
  ) {
    this.now = options.now ?? Date.now;
    const start = this.now();
    this.slots = hosts.map((host, i) => ({
      host,
      dueAt: start + Math.floor((i * options.intervalMs) / Math.max(1, hosts.length)),
      running: undefined,
    }));
  }

  /** A host that appeared (a sim cloud launch): due at once, then on the common cadence. */
  add(host: Beating): void {
    this.slots.push({ host, dueAt: this.now(), running: undefined });
  }

  /** Stops beating for a host (terminated); waits for its call in flight, if any. */
  async remove(host: Beating): Promise<void> {
    const index = this.slots.findIndex((slot) => slot.host === host);
    if (index < 0) return;
    const [slot] = this.slots.splice(index, 1);
    await slot?.running;
  }

  start(): void {
    this.poll();
    this.timer ??= setInterval(() => this.poll(), this.options.resolutionMs ?? 100);
  }

  /** Stops scheduling and waits for the calls in flight. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled(this.slots.flatMap((slot) => (slot.running ? [slot.running] : [])));
  }

  private poll(): void {
    const now = this.now();
    const max = this.options.maxConcurrent ?? 64;
    for (const slot of this.slots) {
      if (this.inFlight >= max) return;
      if (slot.running || slot.dueAt > now) continue;
      // Keep the cadence; a host that fell more than an interval behind starts afresh.
      const next = slot.dueAt + this.options.intervalMs;
      slot.dueAt = next > now ? next : now + this.options.intervalMs;
      this.inFlight++;
      slot.running = slot.host
        .tick()
        .catch(() => undefined)
        .finally(() => {
          this.inFlight--;
          slot.running = undefined;
          this.options.afterTick?.(slot.host);
        });
    }
  }
}
