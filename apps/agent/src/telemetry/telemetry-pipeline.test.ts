import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PhaseEventReport, type TelemetryBatch } from "@thaw/protocol";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { backoffDelayMs } from "./backoff.ts";
import { TelemetrySpool } from "./spool.ts";
import { TelemetryPipeline, type TelemetryTransport } from "./telemetry-pipeline.ts";

const log = pino({ level: process.env.DEBUG_TEST ? "debug" : "silent" });
const HOST = "sim-g5-xlarge-1";

/** A control plane that stores events idempotently, and can be down. */
class Receiver {
  down = false;
  /** Refuse batches that contain this cold start (like ingest does for another node's). */
  refuse: string | undefined;
  batches: TelemetryBatch[] = [];
  stored = new Map<string, number[]>();
  sentSequences: string[] = [];
  outcomes: string[] = [];
  kernelCaches: string[] = [];
  transport: TelemetryTransport = (_credential, batch) => {
    if (this.down) return Promise.reject(Object.assign(new Error("connect ECONNREFUSED"), {}));
    const named = [...batch.events, ...batch.outcomes, ...batch.kernelCaches];
    if (this.refuse && named.some((r) => r.coldStartId === this.refuse)) {
      return Promise.reject(
        Object.assign(new Error("control plane answered 404"), {
          status: 404,
          body: JSON.stringify({
            error: { code: "NOT_FOUND", message: "no such cold start on this node" },
          }),
        }),
      );
    }
    this.batches.push(batch);
    let accepted = 0;
    for (const event of batch.events ?? []) {
      this.sentSequences.push(`${event.coldStartId}:${event.sequence}`);
      const list = this.stored.get(event.coldStartId) ?? [];
      if (!list.includes(event.sequence)) {
        list.push(event.sequence);
        accepted++;
      }
      this.stored.set(event.coldStartId, list);
    }
    for (const outcome of batch.outcomes ?? []) this.outcomes.push(outcome.coldStartId);
    for (const cache of batch.kernelCaches) this.kernelCaches.push(cache.kernelCacheId);
    return Promise.resolve({ accepted, duplicates: (batch.events?.length ?? 0) - accepted });
  };
}

const event = (coldStartId: string, sequence: number): PhaseEventReport => ({
  coldStartId,
  sequence,
  phase: "pull",
  startedAt: new Date().toISOString(),
  seconds: 1,
  attributes: {},
});

async function pipeline(
  dir: string,
  receiver: Receiver,
  extra: { retry?: { baseMs: number; maxMs: number } } = {},
) {
  const { spool, load } = await TelemetrySpool.open(dir);
  const p = new TelemetryPipeline({
    spool,
    replayed: load.pending,
    transport: receiver.transport,
    credentialFor: () => "credential",
    flushIntervalMs: 10_000,
    retry: extra.retry ?? { baseMs: 1, maxMs: 2 },
    stateDir: dir,
    log,
  });
  return { p, spool };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("TelemetryPipeline", () => {
  it("sends in batches of at most 500, outcomes after their events", async () => {
    const dir = mkdtempSync(join(tmpdir(), "thaw-telemetry-"));
    const receiver = new Receiver();
    const { p } = await pipeline(dir, receiver);
    const coldStartId = randomUUID();
    for (let i = 1; i <= 1_200; i++) p.event(HOST, event(coldStartId, i));
    p.outcome(HOST, { coldStartId, status: "succeeded", endedAt: new Date().toISOString() });
    await p.stop(2_000);
    expect(
      receiver.batches.map((b) => (b.events?.length ?? 0) + (b.outcomes?.length ?? 0)),
    ).toEqual([500, 500, 201]);
    expect(receiver.stored.get(coldStartId)).toHaveLength(1_200);
    expect(receiver.batches.at(-1)?.outcomes).toHaveLength(1);
    expect(p.depth).toBe(0);
  });

  it("sends a captured kernel cache in the batch's kernelCaches, after the outcome, and keeps it across a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "thaw-telemetry-"));
    const receiver = new Receiver();
    receiver.down = true;
    const first = await pipeline(dir, receiver);
    const coldStartId = randomUUID();
    const kernelCacheId = randomUUID();
    first.p.event(HOST, event(coldStartId, 1));
    first.p.outcome(HOST, { coldStartId, status: "succeeded", endedAt: new Date().toISOString() });
    first.p.kernelCache(HOST, {
      coldStartId,
      kernelCacheId,
      digest: `sha256:${"b".repeat(64)}`,
      bytes: 400_000_000,
    });
    await first.p.flush();
    await settle();
    expect(receiver.batches).toHaveLength(0);
    // "crash" while the control plane is away; the next process sends what was spooled.
    receiver.down = false;
    const second = await pipeline(dir, receiver);
    await second.p.stop(1_000);
    expect(receiver.batches).toHaveLength(1);
    expect(receiver.batches[0]).toMatchObject({
      events: [{ coldStartId, sequence: 1 }],
      outcomes: [{ coldStartId, status: "succeeded" }],
      kernelCaches: [{ coldStartId, kernelCacheId, bytes: 400_000_000 }],
    });
    expect(second.p.depth).toBe(0);
    await first.spool.close();
    await second.spool.close();
  });

  it("keeps a refused kernel-cache report aside with its cold start, and delivers the others", async () => {
    const dir = mkdtempSync(join(tmpdir(), "thaw-telemetry-"));
    const receiver = new Receiver();
    const bad = randomUUID();
    const good = randomUUID();
    receiver.refuse = bad;
    const { p } = await pipeline(dir, receiver);
    p.kernelCache(HOST, {
      coldStartId: bad,
      kernelCacheId: randomUUID(),
      digest: `sha256:${"c".repeat(64)}`,
      bytes: 1,
    });
    p.event(HOST, event(good, 1));
    await p.stop(1_000);
    expect(receiver.stored.get(good)).toEqual([1]);
    expect(receiver.kernelCaches).toEqual([]);
    expect(p.depth).toBe(0);
    const rejected = readFileSync(join(dir, "telemetry-rejected.jsonl"), "utf8");
    expect(rejected).toContain(bad);
    expect(rejected).toContain('"kernelCacheId"');
  });

  it("keeps telemetry across an outage and an agent restart, and never resends what was acknowledged", async () => {
    const dir = mkdtempSync(join(tmpdir(), "thaw-telemetry-"));
    const receiver = new Receiver();
    const first = await pipeline(dir, receiver);
    const early = randomUUID();
    const late = randomUUID();
    for (let i = 1; i <= 3; i++) first.p.event(HOST, event(early, i));
    await first.p.flush();
    await settle();
    expect(receiver.stored.get(early)).toEqual([1, 2, 3]);

    // The control plane goes away; the agent keeps emitting, then "crashes" (no stop()).
    receiver.down = true;
    for (let i = 1; i <= 4; i++) first.p.event(HOST, event(late, i));
    await first.p.flush();
    await settle();
    expect(first.p.depth).toBe(4);

    // A new agent process replays the spool once the control plane is back.
    receiver.down = false;
    const second = await pipeline(dir, receiver);
    expect(second.p.depth).toBe(4);
    await second.p.stop(2_000);
    expect(receiver.stored.get(late)).toEqual([1, 2, 3, 4]);
    // Acknowledged sequences were sent exactly once.
    expect(receiver.sentSequences.filter((s) => s.startsWith(early))).toEqual([
      `${early}:1`,
      `${early}:2`,
      `${early}:3`,
    ]);
    expect(new Set(receiver.sentSequences).size).toBe(receiver.sentSequences.length);
    expect(readFileSync(join(dir, "telemetry-spool.jsonl"), "utf8")).toBe("");
    await first.spool.close();
    await second.spool.close();
  });

  it("backs off while the control plane is down, then delivers", async () => {
    const dir = mkdtempSync(join(tmpdir(), "thaw-telemetry-"));
    const receiver = new Receiver();
    receiver.down = true;
    let attempts = 0;
    const counting: TelemetryTransport = (c, b) => {
      attempts++;
      return receiver.transport(c, b);
    };
    const { spool } = await TelemetrySpool.open(dir);
    const p = new TelemetryPipeline({
      spool,
      transport: counting,
      credentialFor: () => "credential",
      flushIntervalMs: 5,
      retry: { baseMs: 40, maxMs: 80 },
      stateDir: dir,
      log,
    });
    p.start();
    p.event(HOST, event(randomUUID(), 1));
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Flushing every 5 ms, but retries wait 20-80 ms each: a handful of attempts, not 60.
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect(attempts).toBeLessThanOrEqual(10);
    receiver.down = false;
    await p.stop(1_000);
    expect(p.depth).toBe(0);
  });

  it("isolates a refused cold start, delivers the others, and keeps the refused one aside", async () => {
    const dir = mkdtempSync(join(tmpdir(), "thaw-telemetry-"));
    const receiver = new Receiver();
    const bad = randomUUID();
    const good = randomUUID();
    receiver.refuse = bad;
    const { p } = await pipeline(dir, receiver);
    p.event(HOST, event(bad, 1));
    p.event(HOST, event(good, 1));
    p.event(HOST, event(good, 2));
    await p.stop(1_000);
    expect(receiver.stored.get(good)).toEqual([1, 2]);
    expect(receiver.stored.has(bad)).toBe(false);
    expect(p.depth).toBe(0);
    expect(readFileSync(join(dir, "telemetry-rejected.jsonl"), "utf8")).toContain(bad);
  });

  it("waits out a 404 that is not the control plane's answer (no telemetry route yet)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "thaw-telemetry-"));
    let routeDeployed = false;
    const receiver = new Receiver();
    const transport: TelemetryTransport = (credential, batch) =>
      routeDeployed
        ? receiver.transport(credential, batch)
        : Promise.reject(
            Object.assign(new Error("404"), {
              status: 404,
              body: "<!DOCTYPE html><title>404</title>",
            }),
          );
    const { spool } = await TelemetrySpool.open(dir);
    const p = new TelemetryPipeline({
      spool,
      transport,
      credentialFor: () => "credential",
      flushIntervalMs: 10_000,
      retry: { baseMs: 1, maxMs: 1 },
      stateDir: dir,
      log,
    });
    const coldStartId = randomUUID();
    p.event(HOST, event(coldStartId, 1));
    await p.flush();
    await settle();
    expect(p.depth).toBe(1);
    routeDeployed = true;
    await p.stop(1_000);
    expect(receiver.stored.get(coldStartId)).toEqual([1]);
    await spool.close();
  });

  it("holds a host's records until it has a credential", async () => {
    const dir = mkdtempSync(join(tmpdir(), "thaw-telemetry-"));
    const receiver = new Receiver();
    const { spool } = await TelemetrySpool.open(dir);
    let credential: string | undefined = undefined;
    const p = new TelemetryPipeline({
      spool,
      transport: receiver.transport,
      credentialFor: () => credential,
      flushIntervalMs: 10_000,
      retry: { baseMs: 1, maxMs: 1 },
      stateDir: dir,
      log,
    });
    p.event(HOST, event(randomUUID(), 1));
    await p.flush();
    expect(receiver.batches).toHaveLength(0);
    credential = "now";
    await p.stop(1_000);
    expect(receiver.batches).toHaveLength(1);
  });
});

describe("backoffDelayMs", () => {
  it("doubles per attempt with jitter and caps at the maximum", () => {
    const policy = { baseMs: 500, maxMs: 30_000 };
    expect(backoffDelayMs(1, policy, () => 0)).toBe(250);
    expect(backoffDelayMs(1, policy, () => 1)).toBe(500);
    expect(backoffDelayMs(3, policy, () => 1)).toBe(2_000);
    for (const attempt of [7, 8, 20, 1_000]) {
      expect(backoffDelayMs(attempt, policy, () => 1)).toBe(30_000);
      expect(backoffDelayMs(attempt, policy, () => 0)).toBe(15_000);
    }
    for (let i = 0; i < 1_000; i++) {
      const delay = backoffDelayMs(1 + (i % 40), policy);
      expect(delay).toBeGreaterThanOrEqual(250);
      expect(delay).toBeLessThanOrEqual(30_000);
    }
  });
});
