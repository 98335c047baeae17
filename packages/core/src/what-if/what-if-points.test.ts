import { describe, expect, it } from "vitest";
import { AppError } from "../errors/index.ts";
import { HOST_PROFILES } from "../cold-start-model/index.ts";
import { KEEPALIVE_MINUTES, PRICES, type PolicyResult } from "../replay/index.ts";
import { whatIfFleet, type WhatIfNodeRow } from "./what-if-fleet.ts";
import { whatIfPoint, whatIfRuns } from "./what-if-points.ts";
import { whatIfWindow } from "./what-if-window.ts";

const result: PolicyResult = {
  requests: 10,
  coldStartFraction: 0.1,
  meanWaitSeconds: 2,
  p50WaitSeconds: 0,
  p99WaitSeconds: 30,
  coldStartsByPath: { warm: 0, wake: 0, restore: 1, peer: 0, lazy: 0, pull: 0 },
  servedByIdleReplica: 3,
  warmHandovers: 0,
  unservedRequests: 0,
  idleGpuHours: 4,
  gpuHours: 10,
  sleepingGbHours: 0,
};

describe("what-if runs and points", () => {
  it("runs thaw at the default, the sweep and today's price once each, then every fixed keep-alive", () => {
    const runs = whatIfRuns({ value: 3, source: "endpoint" });
    const thaw = runs.filter((r) => r.policy.family === "thaw").map((r) => r.price);
    expect(thaw).toEqual([null, ...[...PRICES, 3].sort((a, b) => a - b)]);
    expect(runs.filter((r) => r.policy.family === "pull-keepalive")).toHaveLength(
      KEEPALIVE_MINUTES.length,
    );
    expect(runs.filter((r) => r.policy.family === "lazy-keepalive")).toHaveLength(
      KEEPALIVE_MINUTES.length,
    );
    // A price already swept is not run twice.
    expect(whatIfRuns({ value: 4, source: "org" }).length).toBe(runs.length - 1);
  });

  it("marks today's setting, prices the GPU-hours, and applies only thaw's other settings", () => {
    const runs = whatIfRuns({ value: 4, source: "endpoint" });
    const at = (family: string, price: number | null) =>
      runs.find((r) => r.policy.family === family && r.price === price)!;
    const o = {
      current: { value: 4, source: "endpoint" as const },
      orgPrice: null,
      usdPerGpuHour: 1.25,
    };
    const today = whatIfPoint(at("thaw", 4), result, o);
    expect(today).toMatchObject({ current: true, apply: null, costUsd: 12.5, setting: "price 4" });
    expect(whatIfPoint(at("thaw", 16), result, o)).toMatchObject({
      current: false,
      apply: { gpuSecondsPerWaitSecond: 16 },
    });
    // The default is reached by clearing the endpoint's price, when the org sets none...
    expect(whatIfPoint(at("thaw", null), result, o).apply).toEqual({
      gpuSecondsPerWaitSecond: null,
    });
    // ...and cannot be while the org's price would take its place.
    expect(whatIfPoint(at("thaw", null), result, { ...o, orgPrice: 2 }).apply).toBeNull();
    const fixed = whatIfPoint(at("pull-keepalive", null), result, o);
    expect(fixed).toMatchObject({ current: false, apply: null, family: "pull-keepalive" });
    expect(whatIfPoint(at("thaw", 16), result, { ...o, usdPerGpuHour: null }).costUsd).toBeNull();
    // With no price anywhere, today is the default.
    const platform = { ...o, current: { value: null, source: "platform" as const } };
    expect(whatIfPoint(at("thaw", null), result, platform).current).toBe(true);
    expect(whatIfPoint(at("pull-keepalive", null), result, platform).current).toBe(false);
  });
});

describe("the what-if's fleet", () => {
  const node = (over: Partial<WhatIfNodeRow> = {}): WhatIfNodeRow => ({
    name: "n1",
    instanceType: "g6e.xlarge",
    gpuModel: "L40S",
    gpuCount: 1,
    vcpus: 4,
    networkGbps: 20,
    registryRttMs: 3,
    pcieGBps: 25,
    hourlyPriceUsd: 1.861,
    diskReadMiBps: 125,
    diskWriteMiBps: 125,
    volumeThroughputMiBps: 1000,
    measuredDiskReadMiBps: null,
    measuredDiskWriteMiBps: null,
    memoryBytes: 32 * 1024 ** 3,
    ...over,
  });

  it("is the org's hosts of the GPU, grown to hold maxReplicas, priced per GPU", () => {
    const fleet = whatIfFleet({
      nodes: [
        node(),
        node({ name: "n2", gpuCount: 2, hourlyPriceUsd: 3 }),
        node({ name: "other", gpuModel: "A10G" }),
        node({ name: "unpriced", hourlyPriceUsd: null }),
      ],
      gpuType: "L40S",
      gpusPerReplica: 1,
      maxReplicas: 6,
    });
    expect(fleet.source).toBe("nodes");
    expect(fleet.hosts.map((h) => h.name)).toEqual(["n1", "n2", "unpriced", "n1+1", "n1+2"]);
    expect(fleet.hosts.reduce((n, h) => n + h.gpus, 0)).toBe(6);
    // (1.861 + 3) / 3 GPUs: the unpriced host is left out of the mean.
    expect(fleet.usdPerGpuHour).toBeCloseTo(4.861 / 3, 4);
    // The disk as placement counts it: the provisioned gp3 volume, not the 125 MiB/s default.
    expect(fleet.hosts[0]!.host.diskWriteMiBps).toBe(1000);
  });

  it("without a host of the GPU, is the published profile that has it, unpriced", () => {
    const fleet = whatIfFleet({ nodes: [], gpuType: "L40S", gpusPerReplica: 1, maxReplicas: 3 });
    expect(fleet).toMatchObject({ source: "default", profile: "g6e.xlarge", usdPerGpuHour: null });
    expect(fleet.hosts).toHaveLength(3);
    expect(fleet.hosts[0]!.host.networkGbps).toBe(HOST_PROFILES["g6e.xlarge"].registryNetworkGbps);
    expect(
      whatIfFleet({ nodes: [], gpuType: "TPU", gpusPerReplica: 1, maxReplicas: 1 }).profile,
    ).toBe("g5.xlarge");
  });
});

describe("the what-if's window", () => {
  const now = new Date("2026-11-27T03:00:30Z");
  const field = (input: unknown) => {
    try {
      whatIfWindow(input, "query", now);
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      return [(error as AppError).code, (error as AppError).details?.field];
    }
    return null;
  };

  it("is the week up to now's minute by default, in whole minutes", () => {
    expect(whatIfWindow({}, "query", now)).toEqual({
      from: new Date("2026-11-20T03:00:00Z"),
      to: new Date("2026-11-27T03:00:00Z"),
    });
  });

  it("refuses a window that is empty, reversed, too long or in the future, naming the field", () => {
    expect(field({ from: "2026-11-27T02:00:00Z", to: "2026-11-27T02:00:10Z" })).toEqual([
      "UNPROCESSABLE",
      "query.from",
    ]);
    expect(field({ from: "2026-11-27T02:00:00Z", to: "2026-11-26T02:00:00Z" })).toEqual([
      "UNPROCESSABLE",
      "query.from",
    ]);
    expect(field({ from: "2026-10-01T00:00:00Z" })).toEqual(["UNPROCESSABLE", "query.from"]);
    expect(field({ from: "2027-01-01T00:00:00Z", to: "2027-01-02T00:00:00Z" })).toEqual([
      "UNPROCESSABLE",
      "query.from",
    ]);
    expect(field({ from: "yesterday" })).toEqual(["BAD_REQUEST", "query.from"]);
    expect(field({ window: "7d" })?.[0]).toBe("BAD_REQUEST");
  });
});
