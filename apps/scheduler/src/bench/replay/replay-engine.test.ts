import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  clairvoyant,
  packOnto,
  pullKeepAlive,
  replay,
  thaw,
  thawSleeping,
  thawWithoutKernelCache,
  type TraceRequest,
} from "@thaw/core/replay";
import { sleepBudgetBytes, sleepingEngineBytes as sleepingBytes } from "@thaw/core/sleeping";
import { InputError, parseFleet, parseTrace } from "./replay-input.ts";

const dir = mkdtempSync(join(tmpdir(), "thaw-replay-"));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const fleet = parseFleet(
  file(
    "fleet.json",
    JSON.stringify({
      hosts: [{ profile: "g5.xlarge", count: 2 }],
      defaults: { endpoint: { gpuType: "A10G", concurrency: 1 } },
    }),
  ),
);

/** An 8B model (16 GB of weights) on one L40S host, with `memoryGiB` of host RAM. */
const l40sFleet = (name: string, memoryGiB: number) =>
  parseFleet(
    file(
      name,
      JSON.stringify({
        hosts: [{ profile: "g6e.xlarge", count: 1, memoryGiB }],
        defaults: {
          endpoint: {
            gpuType: "L40S",
            concurrency: 1,
            engine: {
              weightsBytes: 16_000_000_000,
              loader: "concurrent",
              loaderConcurrency: 16,
              initSeconds: 10,
              compileSeconds: 27,
              graphCaptureSeconds: 34,
              warmupSeconds: 20,
              warmCaches: false,
            },
          },
        },
      }),
    ),
  );

describe("sleeping engines in the replay", () => {
  // Two requests a day apart: far past any keep-alive, so the first replica is let go.
  const requests: TraceRequest[] = [
    { at: 0, endpoint: "e", seconds: 1 },
    { at: 86_400, endpoint: "e", seconds: 1 },
  ];

  it("a replica let go sleeps in host memory, and the next start wakes it in seconds", () => {
    const big = l40sFleet("big.json", 128);
    const result = replay({ requests, fleet: big, policy: thawSleeping() });
    expect(result.coldStartsByPath.wake).toBe(1);
    // Level 1 (its weights fit in memory): a PCIe copy of 16 GB and the engine's wake.
    const firstWait = replay({
      requests: [requests[0]!],
      fleet: big,
      policy: thawSleeping(),
    }).meanWaitSeconds;
    expect(firstWait).toBeGreaterThan(10);
    const secondWait = 2 * result.meanWaitSeconds - firstWait;
    expect(secondWait).toBeGreaterThan(0.3);
    expect(secondWait).toBeLessThan(3);
    // It held its process and its weights for most of the day, and no GPU meanwhile.
    const gb = sleepingBytes(16_000_000_000, 1) / 1e9;
    expect(result.sleepingGbHours).toBeGreaterThan(gb * 20);
    const withoutSleep = replay({ requests, fleet: l40sFleet("big.json", 128), policy: thaw() });
    expect(withoutSleep.coldStartsByPath.wake).toBe(0);
    expect(result.gpuHours).toBeLessThanOrEqual(withoutSleep.gpuHours + 1e-9);
    expect(result.meanWaitSeconds).toBeLessThan(withoutSleep.meanWaitSeconds);
  });

  it("sleeps at level 2 where the weights do not fit, and never where nothing fits", () => {
    // 16 GiB: less the reserve and one serving engine's process, 16 GB of weights do not fit.
    expect(sleepBudgetBytes(16 * 2 ** 30, 1)).toBeLessThan(sleepingBytes(16_000_000_000, 1));
    const small = replay({ requests, fleet: l40sFleet("small.json", 16), policy: thawSleeping() });
    expect(small.sleepingGbHours).toBeGreaterThan(0);
    expect(small.sleepingGbHours).toBeLessThan((sleepingBytes(16_000_000_000, 2) / 1e9) * 25);
    const none = replay({ requests, fleet: l40sFleet("none.json", 4), policy: thawSleeping() });
    expect(none.sleepingGbHours).toBe(0);
    expect(none.coldStartsByPath.wake).toBe(0);
  });
});

describe("replay engine", () => {
  it("a request that finds a ready replica waits 0; the first one waits for a cold start", () => {
    const first: TraceRequest = { at: 0, endpoint: "e", seconds: 1 };
    const startSeconds = replay({
      requests: [first],
      fleet,
      policy: pullKeepAlive(10),
    }).p99WaitSeconds;
    // The second request comes 5 minutes into the replica's 10-minute keep-alive.
    const requests = [first, { at: startSeconds + 300, endpoint: "e", seconds: 1 }];
    const result = replay({ requests, fleet, policy: pullKeepAlive(10) });
    expect(result.coldStartsByPath.pull).toBe(1);
    expect(result.p99WaitSeconds).toBeGreaterThan(10);
    expect(result.meanWaitSeconds).toBeCloseTo(startSeconds / 2, 2);
    expect(result.coldStartFraction).toBe(0.5);
  });

  it("a busy replica (concurrency 1) makes a concurrent request start another one", () => {
    const requests: TraceRequest[] = [
      { at: 0, endpoint: "e", seconds: 5_000 },
      { at: 4_000, endpoint: "e", seconds: 1 },
    ];
    const result = replay({ requests, fleet, policy: pullKeepAlive(10) });
    expect(result.coldStartsByPath.pull).toBe(2);
  });

  it("accounts GPU-hours: held from the start to the release after the keep-alive", () => {
    const requests: TraceRequest[] = [{ at: 0, endpoint: "e", seconds: 1 }];
    const result = replay({ requests, fleet, policy: pullKeepAlive(10) });
    const held = result.gpuHours * 3600;
    // start + 1 s of service + 600 s keep-alive, on one GPU.
    expect(held).toBeGreaterThan(600);
    expect(result.idleGpuHours * 3600).toBeGreaterThanOrEqual(599);
    expect(result.idleGpuHours * 3600).toBeLessThan(605);
  });

  it("routes like a scale-down-aware router: busiest ready replica with a free slot, ties to the oldest", () => {
    const replica = (since: number, readyAt: number, slots: number[]) => ({
      since,
      readyAt,
      slots,
    });
    const idle = replica(0, 10, [0, 0, 0]);
    const busier = replica(5, 20, [150, 0, 0]);
    const busiest = replica(9, 30, [150, 150, 0]);
    const full = replica(1, 10, [150, 150, 150]);
    const starting = replica(2, 120, [120, 120, 120]);
    const all = [idle, full, starting, busier, busiest];
    expect(packOnto(all, 100)).toEqual({ replica: busiest, slot: 2, at: 100 });
    // Equally loaded: the oldest.
    const older = replica(3, 10, [150, 0, 0]);
    expect(packOnto([busier, older, idle], 100)).toEqual({ replica: older, slot: 1, at: 100 });
    // Nothing ready with room: the earliest slot to free up, a starting replica's included.
    expect(packOnto([full, starting], 100)).toEqual({ replica: starting, slot: 0, at: 120 });
    expect(packOnto([], 100)).toBeNull();
  });

  it("packs light load onto one replica, so a keep-alive releases the surplus one", () => {
    // Two long concurrent requests start two replicas (concurrency 1); both are free by
    // 11,100 s. Then one 1-second request a minute for five hours: one replica serves all of
    // it, and the other is released 10 minutes after its request, as if the load never came.
    const first: TraceRequest = { at: 0, endpoint: "e", seconds: 10_000 };
    const burst: TraceRequest[] = [first, { at: 10, endpoint: "e", seconds: 10_000 }];
    const light: TraceRequest[] = Array.from({ length: 300 }, (_, i) => ({
      at: 11_100 + i * 60,
      endpoint: "e",
      seconds: 1,
    }));
    const policy = pullKeepAlive(10);
    const startA = replay({ requests: [first], fleet, policy }).p99WaitSeconds;
    const burstOnly = replay({ requests: burst, fleet, policy });
    const result = replay({ requests: [...burst, ...light], fleet, policy });
    // Both replicas are free when the light load begins, less than a keep-alive before.
    const startB = 2 * burstOnly.meanWaitSeconds - startA;
    for (const free of [startA + 10_000, 10 + startB + 10_000]) {
      expect(free).toBeLessThan(11_100);
      expect(free).toBeGreaterThan(11_100 - 600);
    }
    expect(result.coldStartsByPath.pull).toBe(2);
    expect(result.p50WaitSeconds).toBe(0);
    // Only the first replica is held longer: from its burst-only release to a keep-alive
    // after the last light request. The second one's GPU-hours do not change.
    const lastEnd = light.at(-1)!.at + 1;
    const extended = lastEnd + 600 - (startA + 10_000 + 600);
    expect(result.gpuHours * 3600).toBeCloseTo(burstOnly.gpuHours * 3600 + extended, -1);
  });

  it("is deterministic for a seed, and thaw learns to use the snapshot it captured", () => {
    const requests: TraceRequest[] = Array.from({ length: 6 }, (_, i) => ({
      at: i * 7_200,
      endpoint: "e",
      seconds: 1,
    }));
    const a = replay({ requests, fleet, policy: thaw(), seed: 7 });
    expect(replay({ requests, fleet, policy: thaw(), seed: 7 })).toEqual(a);
    expect(a.coldStartsByPath.restore).toBeGreaterThan(0);
  });
});

describe("the kernel-cache store in the replay", () => {
  // Requests a day apart on pull only: every start is cold; only the first compiles cold when
  // the store keeps what it compiled.
  const requests: TraceRequest[] = Array.from({ length: 4 }, (_, i) => ({
    at: i * 86_400,
    endpoint: "e",
    seconds: 1,
  }));
  const pullOnly = <P extends ReturnType<typeof thaw>>(policy: P): P => ({
    ...policy,
    paths: () => ["pull"],
  });

  it("fetches the cache the first start stored, so later pulls skip the cold compile", () => {
    const fleet = l40sFleet("store.json", 64);
    const stored = replay({ requests, fleet, policy: pullOnly(thaw()), seed: 3 });
    const none = replay({ requests, fleet, policy: pullOnly(thawWithoutKernelCache()), seed: 3 });
    expect(stored.coldStartsByPath.pull).toBe(4);
    expect(none.coldStartsByPath.pull).toBe(4);
    // The first start waits the same; the three after it save most of the 81 s of cold
    // compile, capture and warmup, less the 10 s fetch.
    const saved = (none.meanWaitSeconds - stored.meanWaitSeconds) * requests.length;
    expect(saved).toBeGreaterThan(3 * 40);
  });
});

describe("the clairvoyant bound", () => {
  // One host, one path, one request at a time: every idle gap is one keep-or-release choice,
  // and the bound's is the cheapest at its price. Common random numbers make its restarts
  // the ones the other policies meet.
  const oneHost = parseFleet(
    file(
      "one-host.json",
      JSON.stringify({
        hosts: [{ profile: "g5.xlarge", count: 1 }],
        defaults: { endpoint: { gpuType: "A10G", concurrency: 1, estargz: false, snapshot: null } },
      }),
    ),
  );
  const pullOnly = (price: number) => ({ ...clairvoyant(price), paths: () => ["pull" as const] });
  /** The policies' common objective: price × request wait-seconds + idle GPU-seconds. */
  const cost = (r: ReturnType<typeof replay>, price: number) =>
    price * r.meanWaitSeconds * r.requests + r.idleGpuHours * 3600;

  it("keeps a replica over a short gap and releases it over a long one, by the price", () => {
    // The first start pulls 22 GB (about 14 minutes); the second request comes more than an
    // hour after the first was served: worth holding for only at a dear price.
    const requests: TraceRequest[] = [
      { at: 0, endpoint: "e", seconds: 1 },
      { at: 5_000, endpoint: "e", seconds: 1 },
    ];
    const dear = replay({ requests, fleet: oneHost, policy: pullOnly(100) });
    expect(dear.coldStartsByPath.pull).toBe(1);
    expect(dear.servedByIdleReplica).toBe(1);
    const cheap = replay({ requests, fleet: oneHost, policy: pullOnly(0) });
    expect(cheap.coldStartsByPath.pull).toBe(2);
    expect(cheap.idleGpuHours).toBeLessThan(dear.idleGpuHours);
  });

  it("is never beaten at its price by a fixed keep-alive on the same path", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 700, max: 20_000 }), { minLength: 1, maxLength: 12 }),
        fc.constantFrom(0, 0.5, 2, 8, 64),
        fc.constantFrom(1, 5, 20, 60),
        (gaps, price, minutes) => {
          // Requests far enough apart that each finds the previous one done.
          let at = 0;
          const requests: TraceRequest[] = gaps.map((gap) => {
            at += gap;
            return { at, endpoint: "e", seconds: 1 };
          });
          const bound = replay({ requests, fleet: oneHost, policy: pullOnly(price) });
          const fixed = replay({ requests, fleet: oneHost, policy: pullKeepAlive(minutes) });
          expect(cost(bound, price)).toBeLessThanOrEqual(cost(fixed, price) + 1e-6);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("the warm pool in the replay", () => {
  it("parks a replica at a scale-down and hands it over on the next request, counted apart", () => {
    // Every 10 minutes, a request: at a dear price thaw keeps a replica parked between them.
    const requests: TraceRequest[] = Array.from({ length: 12 }, (_, i) => ({
      at: i * 600,
      endpoint: "e",
      seconds: 1,
    }));
    const r = replay({ requests, fleet, policy: thaw(64) });
    expect(r.warmHandovers).toBeGreaterThan(5);
    expect(r.coldStartsByPath.warm).toBe(r.warmHandovers);
    // A handover waits the handover's half second, not a start.
    expect(r.p50WaitSeconds).toBeLessThan(1);
    // Free waits: a replica is parked only when the gap would cost less than restarting it.
    const cheap = replay({ requests, fleet, policy: thaw(0) });
    expect(cheap.warmHandovers).toBeLessThan(r.warmHandovers);
    expect(cheap.idleGpuHours).toBeLessThan(r.idleGpuHours);
    expect(cheap.meanWaitSeconds).toBeGreaterThan(r.meanWaitSeconds);
  });

  it("queues a request that finds no GPU until one comes free, rather than dropping it", () => {
    const tiny = parseFleet(
      file(
        "tiny.json",
        JSON.stringify({
          hosts: [{ profile: "g5.xlarge", count: 1 }],
          defaults: { endpoint: { gpuType: "A10G", concurrency: 1 } },
        }),
      ),
    );
    const requests: TraceRequest[] = [
      { at: 0, endpoint: "a", seconds: 10 },
      { at: 1, endpoint: "b", seconds: 10 },
    ];
    const r = replay({ requests, fleet: tiny, policy: pullKeepAlive(1) });
    expect(r.unservedRequests).toBe(0);
    expect(r.coldStartsByPath.pull).toBe(2);
    // b waited for a's keep-alive to end, then for its own start.
    expect(r.p99WaitSeconds).toBeGreaterThan(60);
  });
});

describe("replay inputs", () => {
  it("names what is wrong with a trace or a fleet", () => {
    expect(() => parseTrace(join(dir, "missing.csv"), "events")).toThrow(InputError);
    expect(() =>
      parseTrace(file("bad.csv", "timestamp_s,endpoint,duration_s\nx,e,1\n"), "events"),
    ).toThrow(/line 2 is malformed/);
    expect(() => parseTrace(file("azure.csv", "a,b\n"), "azure-llm")).toThrow(
      /not an azure-llm trace/,
    );
    expect(() =>
      parseFleet(file("f.json", JSON.stringify({ hosts: [{ profile: "nope", count: 1 }] }))),
    ).toThrow(/fleet\.hosts\.0\.profile: unknown profile/);
    expect(() => parseFleet(file("f2.json", JSON.stringify({ hosts: [], extra: 1 })))).toThrow(
      /--fleet: fleet/,
    );
  });

  it("reads azure-llm timestamps relative to the first request", () => {
    const trace = parseTrace(
      file(
        "a.csv",
        "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.9799600,4808,10\n2023-11-16 18:17:05.4799600,100,40\n",
      ),
      "azure-llm",
      "code",
    );
    expect(trace.map((r) => r.at)).toEqual([0, 1.5]);
    expect(trace[1]!.seconds).toBeCloseTo(100 / 8_000 + 1, 6);
  });
});
