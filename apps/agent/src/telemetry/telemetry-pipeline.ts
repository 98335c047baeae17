import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type ColdStartOutcomeReport,
  type KernelCacheCapturedReport,
  type PhaseEventReport,
  TELEMETRY_MAX_EVENTS_PER_BATCH,
  type TelemetryBatch,
  type TelemetryResponse,
} from "@thaw/protocol";
import { type Logger } from "pino";
import { type AgentMetrics } from "../metrics.ts";
import { type BackoffPolicy, backoffDelayMs } from "./backoff.ts";
import { type SpoolRecord, type TelemetrySpool } from "./spool.ts";

// Phase events, outcomes and captured kernel caches from every host of this process, to the
// control plane: spooled to disk first, then sent per host (a node may only write its own
// telemetry) in batches of at most 500 records every ~250 ms, or at once when a host has a
// full batch. A failed send backs off (exponential, jittered, capped) for that host only; the
// records stay spooled.

/** Sends one batch with the host's credential; rejects with `status` for an HTTP answer. */
export type TelemetryTransport = (
  credential: string,
  batch: TelemetryBatch,
) => Promise<TelemetryResponse>;

export interface TelemetryPipelineOptions {
  spool: TelemetrySpool;
  /** Records read back from the spool at start (sent first). */
  replayed?: readonly SpoolRecord[];
  transport: TelemetryTransport;
  /** The host's current credential; undefined while it has none (not joined yet). */
  credentialFor: (host: string) => string | undefined;
  flushIntervalMs: number;
  retry: BackoffPolicy;
  /** Where batches the control plane refused outright are kept for an operator. */
  stateDir: string;
  log: Logger;
  metrics?: AgentMetrics;
  maxBatch?: number;
  /** Concurrent sends across hosts (default 64). */
  maxInFlight?: number;
  random?: () => number;
  now?: () => number;
}

interface HostQueue {
  records: SpoolRecord[];
  inFlight: boolean;
  attempt: number;
  notBefore: number;
  /** After a batch was refused: send one cold start at a time to find the bad one. */
  isolate: boolean;
}

export class TelemetryPipeline {
  private readonly queues = new Map<string, HostQueue>();
  /** Emitted, not yet on disk: written (and fsync'd) together at the next flush. */
  private unspooled: SpoolRecord[] = [];
  /** Taken from `unspooled`, being written to the spool right now. */
  private spooling = 0;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private flushAgain = false;
  private inFlight = 0;
  private readonly sends = new Set<Promise<void>>();
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly random: () => number;
  private readonly now: () => number;

  constructor(private readonly options: TelemetryPipelineOptions) {
    this.maxBatch = options.maxBatch ?? TELEMETRY_MAX_EVENTS_PER_BATCH;
    this.maxInFlight = options.maxInFlight ?? 64;
    this.random = options.random ?? Math.random;
    this.now = options.now ?? Date.now;
    for (const record of options.replayed ?? []) this.queue(record.host).records.push(record);
    this.updateGauges();
  }

  event(host: string, event: PhaseEventReport): void {
    this.add({ id: this.options.spool.nextId(), host, event });
  }

  outcome(host: string, outcome: ColdStartOutcomeReport): void {
    this.add({ id: this.options.spool.nextId(), host, outcome });
  }

  /** A kernel cache the host captured and pushed after one of its starts (after its outcome). */
  kernelCache(host: string, kernelCache: KernelCacheCapturedReport): void {
    this.add({ id: this.options.spool.nextId(), host, kernelCache });
  }

  /** Records not yet acknowledged (in memory and spooled). */
  get depth(): number {
    let depth = this.unspooled.length + this.spooling;
    for (const queue of this.queues.values()) depth += queue.records.length;
    return depth;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.options.flushIntervalMs);
  }

  /** Stops the timer, spools what is in memory, and tries to send for up to `timeoutMs`. */
  async stop(timeoutMs: number): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    const deadline = this.now() + timeoutMs;
    await this.flush();
    while (this.depth > 0 && this.now() < deadline && this.anySendable()) {
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(50, this.options.flushIntervalMs)),
      );
      await this.flush();
    }
    await this.flushing;
    await Promise.allSettled([...this.sends]);
    await this.options.spool.compactIfDrained();
  }

  /** One round: spool new records, then send every host's next batch that may go now. */
  flush(): Promise<void> {
    if (this.flushing) {
      this.flushAgain = true;
      return this.flushing;
    }
    this.flushing = this.flushRound()
      .catch((error: unknown) => this.options.log.error({ err: error }, "telemetry flush failed"))
      .finally(() => {
        this.flushing = undefined;
        if (this.flushAgain) {
          this.flushAgain = false;
          void this.flush();
        }
      });
    return this.flushing;
  }

  private add(record: SpoolRecord): void {
    this.unspooled.push(record);
    this.options.metrics?.telemetryQueueDepth.inc();
    if (this.unspooled.length >= this.maxBatch) void this.flush();
  }

  private queue(host: string): HostQueue {
    let queue = this.queues.get(host);
    if (!queue) {
      queue = { records: [], inFlight: false, attempt: 0, notBefore: 0, isolate: false };
      this.queues.set(host, queue);
    }
    return queue;
  }

  private async flushRound(): Promise<void> {
    if (this.unspooled.length > 0) {
      const batch = this.unspooled;
      this.unspooled = [];
      this.spooling += batch.length;
      try {
        await this.options.spool.append(batch);
      } catch (error) {
        // Disk trouble must not lose telemetry: keep the records in memory and still send.
        this.options.log.error({ err: error }, "telemetry spool write failed; sending from memory");
      } finally {
        this.spooling -= batch.length;
      }
      for (const record of batch) this.queue(record.host).records.push(record);
    }
    this.sendReady();
    await this.options.spool.compactIfDrained();
  }

  /** Starts the next batch of every host that may send now, up to the in-flight limit. */
  private sendReady(): void {
    const now = this.now();
    for (const [host, queue] of this.queues) {
      if (this.inFlight >= this.maxInFlight) break;
      if (queue.records.length === 0) {
        if (!queue.inFlight && queue.attempt === 0) this.queues.delete(host);
        continue;
      }
      if (queue.inFlight || now < queue.notBefore) continue;
      const credential = this.options.credentialFor(host);
      if (credential === undefined) continue;
      this.send(host, queue, credential);
    }
    this.updateGauges();
  }

  private anySendable(): boolean {
    for (const [host, queue] of this.queues) {
      if (queue.records.length > 0 && this.options.credentialFor(host) !== undefined) return true;
    }
    return this.unspooled.length + this.spooling > 0;
  }

  private send(host: string, queue: HostQueue, credential: string): void {
    const records = this.nextBatch(queue);
    queue.inFlight = true;
    this.inFlight++;
    const batch: TelemetryBatch = {
      events: records.flatMap((r) => (r.event ? [r.event] : [])),
      outcomes: records.flatMap((r) => (r.outcome ? [r.outcome] : [])),
      kernelCaches: records.flatMap((r) => (r.kernelCache ? [r.kernelCache] : [])),
    };
    const sending = this.options
      .transport(credential, batch)
      .then(
        () => this.acknowledged(queue, records),
        (error: unknown) => this.failed(host, queue, records, error),
      )
      .finally(() => {
        queue.inFlight = false;
        this.inFlight--;
        this.sends.delete(sending);
        // The slot is free: the next batch of this host, or of a host that waited for a slot.
        this.sendReady();
      });
    this.sends.add(sending);
  }

  private nextBatch(queue: HostQueue): SpoolRecord[] {
    const head = queue.records.slice(0, this.maxBatch);
    if (!queue.isolate) return head;
    const first = coldStartOf(head[0]!);
    return head.filter((record) => coldStartOf(record) === first);
  }

  private acknowledged(queue: HostQueue, records: SpoolRecord[]): void {
    this.remove(queue, records);
    queue.attempt = 0;
    queue.notBefore = 0;
    if (queue.records.length === 0) queue.isolate = false;
    this.options.metrics?.telemetryBatches.inc({ result: "acknowledged" });
    this.options.metrics?.telemetryRecords.inc(records.length);
    // Not awaited: the send slot is free now; acks are written together a moment later.
    this.options.spool
      .ack(records.map((r) => r.id))
      .catch((error: unknown) =>
        this.options.log.error({ err: error }, "telemetry spool ack failed"),
      );
  }

  private async failed(
    host: string,
    queue: HostQueue,
    records: SpoolRecord[],
    error: unknown,
  ): Promise<void> {
    const status = statusOf(error);
    const refused = isRefusal(error, status);
    if (refused) {
      const coldStarts = new Set(records.map(coldStartOf));
      if (coldStarts.size > 1) {
        // One bad cold start refuses the whole batch: retry them one at a time.
        queue.isolate = true;
        return;
      }
      this.options.metrics?.telemetryBatches.inc({ result: "rejected" });
      this.options.log.error(
        { host, coldStartId: [...coldStarts][0], status, err: error, records: records.length },
        "control plane refused telemetry; kept in telemetry-rejected.jsonl",
      );
      this.remove(queue, records);
      await appendFile(
        join(this.options.stateDir, "telemetry-rejected.jsonl"),
        records
          .map(
            (r) =>
              `${JSON.stringify({ host: r.host, status, record: r.event ?? r.outcome ?? r.kernelCache })}\n`,
          )
          .join(""),
        { mode: 0o600 },
      ).catch(() => undefined);
      await this.options.spool.ack(records.map((r) => r.id));
      return;
    }
    queue.attempt++;
    const delay = backoffDelayMs(queue.attempt, this.options.retry, this.random);
    queue.notBefore = this.now() + delay;
    this.options.metrics?.telemetryBatches.inc({ result: "failed" });
    const log =
      queue.attempt === 1 || queue.attempt % 10 === 0
        ? this.options.log.warn
        : this.options.log.debug;
    log.call(
      this.options.log,
      { host, attempt: queue.attempt, retryInMs: Math.round(delay), status, err: error },
      "telemetry send failed; kept in the spool, retrying",
    );
  }

  private remove(queue: HostQueue, records: SpoolRecord[]): void {
    const sent = new Set(records);
    queue.records = queue.records.filter((record) => !sent.has(record));
  }

  private updateGauges(): void {
    this.options.metrics?.telemetryQueueDepth.set(this.depth);
    this.options.metrics?.telemetrySpoolBytes.set(this.options.spool.sizeBytes);
  }
}

function coldStartOf(record: SpoolRecord): string {
  return (record.event ?? record.outcome ?? record.kernelCache).coldStartId;
}

/**
 * The control plane said no to this batch (bad or foreign cold starts): a 4xx carrying its
 * JSON error envelope. A 4xx without one (no such route yet, a proxy) is an outage, and
 * 401/408/429 are worth waiting out: those are retried, the records stay spooled.
 */
function isRefusal(error: unknown, status: number | undefined): boolean {
  if (status === undefined || status < 400 || status >= 500 || [401, 408, 429].includes(status))
    return false;
  const body = (error as { body?: unknown }).body;
  if (typeof body !== "string") return true;
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown } } | null;
    return typeof parsed?.error?.code === "string";
  } catch {
    return false;
  }
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === "number" ? status : undefined;
}
