import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";

// bench:replay's output is a contract other tooling reads (bench-contracts.md, extended in the
// README): `policies` as the contract has them, `frontiers`, `targets` and `seconds`. Run as a process on a
// small trace, the document must have that shape, every family its sweep, and the SVG plot
// must be written.

const dir = mkdtempSync(join(tmpdir(), "thaw-replay-cli-"));
const cli = join(import.meta.dirname, "cli.ts");

const Result = z
  .object({
    requests: z.number().int(),
    coldStartFraction: z.number().min(0).max(1),
    meanWaitSeconds: z.number().min(0),
    p50WaitSeconds: z.number().min(0),
    p99WaitSeconds: z.number().min(0),
    coldStartsByPath: z.object({
      warm: z.number().int(),
      wake: z.number().int(),
      restore: z.number().int(),
      lazy: z.number().int(),
      pull: z.number().int(),
    }),
    servedByIdleReplica: z.number().int(),
    warmHandovers: z.number().int(),
    unservedRequests: z.number().int(),
    idleGpuHours: z.number().min(0),
    gpuHours: z.number().min(0),
    sleepingGbHours: z.number().min(0),
  })
  .strict();
const Point = z
  .object({
    setting: z.string().min(1),
    meanWaitSeconds: z.number().min(0),
    p99WaitSeconds: z.number().min(0),
    idleGpuHours: z.number().min(0),
    gpuHours: z.number().min(0),
    coldStartFraction: z.number().min(0).max(1),
    wakes: z.number().int().min(0),
    sleepingGbHours: z.number().min(0),
  })
  .strict();
const FrontierPair = z.object({ thaw: z.number(), sleeping: z.number().nullable() }).strict();
const Output = z
  .object({
    policies: z.record(z.string(), Result),
    frontiers: z.record(z.string(), z.array(Point)),
    targets: z.object({
      rule: z.string(),
      met: z.number().int(),
      of: z.number().int(),
      checks: z.array(
        z.object({
          family: z.string(),
          setting: z.string(),
          idleGpuHours: z.number(),
          meanWaitSeconds: z.number(),
          boundWaitSeconds: z.number().nullable(),
          targetWaitSeconds: z.number(),
          thaw: z
            .object({ setting: z.string(), meanWaitSeconds: z.number(), idleGpuHours: z.number() })
            .nullable(),
          met: z.boolean(),
        }),
      ),
    }),
    sleeping: z.array(
      z
        .object({
          setting: z.string(),
          thaw: z.object({ meanWaitSeconds: z.number(), idleGpuHours: z.number() }).strict(),
          sameSetting: z
            .object({
              meanWaitSeconds: z.number(),
              idleGpuHours: z.number(),
              wakes: z.number().int(),
              sleepingGbHours: z.number(),
            })
            .strict()
            .nullable(),
          frontierIdleGpuHoursAtThisWait: FrontierPair,
          frontierWaitSecondsAtThisIdle: FrontierPair,
        })
        .strict(),
    ),
    seconds: z.number(),
  })
  .strict();

describe("bench:replay's output", () => {
  it("keeps the contract: policies, frontiers of every family, target checks, a plot", () => {
    // Two endpoints, a request every few minutes for two hours.
    const lines = ["timestamp_s,endpoint,duration_s"];
    for (let i = 0; i < 60; i++) {
      lines.push(`${(i * 120).toFixed(1)},chat,${2 + (i % 5)}`);
      if (i % 3 === 0) lines.push(`${(i * 120 + 37).toFixed(1)},batch,30`);
    }
    const trace = join(dir, "trace.csv");
    writeFileSync(trace, `${lines.join("\n")}\n`);
    const fleet = join(dir, "fleet.json");
    writeFileSync(
      fleet,
      JSON.stringify({
        hosts: [{ profile: "g5.xlarge", count: 3 }],
        defaults: { endpoint: { gpuType: "A10G", concurrency: 4 } },
      }),
    );
    const plot = join(dir, "frontiers.svg");
    const run = spawnSync(
      process.execPath,
      [
        "--import",
        "tsx",
        cli,
        "--trace",
        trace,
        "--fleet",
        fleet,
        "--format",
        "events",
        "--json",
        "--plot",
        plot,
      ],
      { encoding: "utf8", timeout: 110_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    const output = Output.parse(JSON.parse(run.stdout));
    expect(Object.keys(output.policies)).toEqual(
      expect.arrayContaining([
        "thaw",
        "pull-keepalive-10m",
        "lazy-keepalive-10m",
        "hybrid-histogram-pull",
        "oracle",
        "clairvoyant",
      ]),
    );
    for (const result of Object.values(output.policies)) expect(result.requests).toBe(80);
    expect(output.frontiers["pull-keepalive"]!.map((p) => p.setting)).toEqual([
      "1m",
      "2m",
      "5m",
      "10m",
      "20m",
      "30m",
      "60m",
    ]);
    expect(output.frontiers.thaw!.length).toBeGreaterThanOrEqual(6);
    // Thaw with sleeping engines, at each of thaw's settings, compared point by point.
    expect(output.frontiers["thaw-sleep"]!.map((p) => p.setting)).toEqual(
      output.frontiers.thaw!.map((p) => p.setting),
    );
    expect(output.sleeping.map((s) => s.setting)).toEqual(
      output.frontiers.thaw!.map((p) => p.setting),
    );
    expect(output.frontiers.clairvoyant!.length).toBeGreaterThanOrEqual(6);
    expect(output.frontiers["hybrid-histogram-pull"]!.length).toBeGreaterThanOrEqual(2);
    // One check per fixed-policy point.
    const fixed = ["pull-keepalive", "lazy-keepalive", "hybrid-histogram-pull"];
    expect(output.targets.of).toBe(
      fixed.reduce((n, family) => n + output.frontiers[family]!.length, 0),
    );
    expect(output.targets.met).toBe(output.targets.checks.filter((c) => c.met).length);
    expect(readFileSync(plot, "utf8")).toMatch(/^<svg[^>]*>[\s\S]*<polyline[\s\S]*<\/svg>$/);
  }, 120_000);

  it("names a bad flag and exits 2", () => {
    const run = spawnSync(
      process.execPath,
      ["--import", "tsx", cli, "--trace", "x.csv", "--fleet", "f.json", "--format", "nope"],
      { encoding: "utf8", timeout: 60_000 },
    );
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(
      /--format takes azure-llm, events or servegen, and table; not 'nope'/,
    );
  });
});
