import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { replay } from "./replay-engine.ts";
import { InputError, parseFleet, parseTrace, type TraceRequest } from "./replay-input.ts";

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

describe("replay engine", () => {
  it("a request that finds a ready replica waits 0; the first one waits for a cold start", () => {
    const first: TraceRequest = { at: 0, endpoint: "e", seconds: 1 };
    const startSeconds = replay({
      requests: [first],
      fleet,
      policy: "pull-keepalive-10m",
    }).p99WaitSeconds;
    // The second request comes 5 minutes into the replica's 10-minute keep-alive.
    const requests = [first, { at: startSeconds + 300, endpoint: "e", seconds: 1 }];
    const result = replay({ requests, fleet, policy: "pull-keepalive-10m" });
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
    const result = replay({ requests, fleet, policy: "pull-keepalive-10m" });
    expect(result.coldStartsByPath.pull).toBe(2);
  });

  it("accounts GPU-hours: held from the start to the release after the keep-alive", () => {
    const requests: TraceRequest[] = [{ at: 0, endpoint: "e", seconds: 1 }];
    const result = replay({ requests, fleet, policy: "pull-keepalive-10m" });
    const held = result.gpuHours * 3600;
    // start + 1 s of service + 600 s keep-alive, on one GPU.
    expect(held).toBeGreaterThan(600);
    expect(result.idleGpuHours * 3600).toBeGreaterThanOrEqual(599);
    expect(result.idleGpuHours * 3600).toBeLessThan(605);
  });

  it("is deterministic for a seed, and thaw learns to use the snapshot it captured", () => {
    const requests: TraceRequest[] = Array.from({ length: 6 }, (_, i) => ({
      at: i * 7_200,
      endpoint: "e",
      seconds: 1,
    }));
    const a = replay({ requests, fleet, policy: "thaw", seed: 7 });
    expect(replay({ requests, fleet, policy: "thaw", seed: 7 })).toEqual(a);
    expect(a.coldStartsByPath.restore).toBeGreaterThan(0);
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
