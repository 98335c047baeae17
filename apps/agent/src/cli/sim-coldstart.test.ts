import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The command contract of bench-contracts.md, exercised as a user runs it.
const cli = join(dirname(fileURLToPath(import.meta.url)), "sim-coldstart.ts");
const tsx = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "..",
  "node_modules",
  ".bin",
  "tsx",
);

function run(scenario: unknown) {
  const file = join(mkdtempSync(join(tmpdir(), "thaw-scn-")), "scenario.json");
  writeFileSync(file, typeof scenario === "string" ? scenario : JSON.stringify(scenario));
  return spawnSync(tsx, [cli, file], { encoding: "utf8" });
}

const scenario = {
  seed: 1,
  noise: false,
  host: {
    vcpus: 8,
    networkGbps: 40,
    registryRttMs: 3,
    diskWriteMiBps: 125,
    diskReadMiBps: 1000,
    pcieGBps: 12,
  },
  image: {
    format: "estargz",
    layers: [
      { bytes: 12_000_000_000, compression: "gzip-0", content: "weights" },
      { bytes: 900_000_000, compression: "gzip-0", content: "code" },
    ],
    readFraction: 0.9,
  },
  engine: {
    weightsBytes: 12_000_000_000,
    loader: "sequential",
    loaderConcurrency: 1,
    initSeconds: 3,
    compileSeconds: 0,
    graphCaptureSeconds: 0,
    warmupSeconds: 0,
    warmCaches: false,
  },
  path: "lazy",
  lazy: {
    prefetch: true,
    prefetchChunkBytes: 33_554_432,
    lazyChunkBytes: 51_200,
    prefetchTimeoutSeconds: 300,
    fetchTimeoutSeconds: 300,
    createDeadlineSeconds: 300,
    maxCacheFds: 100,
  },
};

// Each case runs the CLI as a process (tsx compiles it first): seconds on a busy 2-core machine.
describe("sim:coldstart", { timeout: 60_000 }, () => {
  it("prints one JSON document whose phases are in order and sum to totalSeconds", () => {
    const out = run(scenario);
    expect(out.status, out.stderr).toBe(0);
    const result = JSON.parse(out.stdout) as {
      path: string;
      phases: { phase: string; seconds: number; bytes: number }[];
      totalSeconds: number;
    };
    expect(result.path).toBe("lazy");
    expect(result.phases.map((p) => p.phase)).toContain("prefetch");
    expect(result.phases.at(-1)?.phase).toBe("ready");
    const sum = result.phases.reduce((s, p) => s + p.seconds, 0);
    expect(result.totalSeconds).toBeCloseTo(sum, 2);
  });

  it("is deterministic for a seed", () => {
    const a = run({ ...scenario, noise: true, seed: 7 });
    const b = run({ ...scenario, noise: true, seed: 7 });
    expect(a.stdout).toBe(b.stdout);
  });

  it("exits 2 naming an unknown field", () => {
    const out = run({ ...scenario, host: { ...scenario.host, gpuSpeed: 3 } });
    expect(out.status).toBe(2);
    expect(out.stderr).toMatch(/scenario\.host.*gpuSpeed|gpuSpeed/);
    expect(out.stdout).toBe("");
  });

  it("exits 2 on a file that is not JSON", () => {
    const out = run("{nope");
    expect(out.status).toBe(2);
    expect(out.stderr).toMatch(/not valid JSON/);
  });
});

describe("the scenarios shipped with the agent (apps/agent/scenarios)", () => {
  const dir = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "scenarios");
  it("each runs, and the wake of an 8B model from host memory is the path under 3 s", () => {
    const totals = new Map<string, { path: string; totalSeconds: number }>();
    for (const name of readdirSync(dir).filter((f) => f.endsWith(".json"))) {
      const result = spawnSync(tsx, [cli, join(dir, name)], { encoding: "utf8" });
      expect(result.status, `${name}: ${result.stderr}`).toBe(0);
      totals.set(name, JSON.parse(result.stdout) as { path: string; totalSeconds: number });
    }
    expect(totals.get("l40s-8b-wake-level-1.json")).toMatchObject({ path: "wake" });
    expect(totals.get("l40s-8b-wake-level-1.json")!.totalSeconds).toBeLessThan(3);
    // Level 2 reads the weights again from gp3: a wake no faster than a restore's reload.
    expect(totals.get("l40s-8b-wake-level-2.json")!.totalSeconds).toBeGreaterThan(60);
    // Restore as the field now does it: staging the weights apart beats vLLM's own reload from
    // the same volume; restore workers and a warm page cache beat one worker reading the disk.
    const seconds = (name: string) => totals.get(name)!.totalSeconds;
    expect(seconds("l40s-8b-restore-staged.json")).toBeLessThan(
      seconds("l40s-8b-restore-disk-vllm-reload.json") / 2,
    );
    expect(seconds("l40s-8b-restore-parallel-page-cache.json")).toBeLessThan(
      seconds("l40s-8b-restore-page-cache.json"),
    );
    // Weights loaded onto the device by a GPU Memory Service while CRIU restores: the engine
    // only maps them, which hides the reload the in-memory restore still paid.
    expect(seconds("l40s-8b-restore-gms.json")).toBeLessThan(
      seconds("l40s-8b-restore-parallel-page-cache.json") - 2,
    );
    // A copy from a serving replica: the cold host's pull, then the lazy mount, then the peer
    // copy without and with the source's kernel caches, each faster; over EFA faster still.
    expect(totals.get("l40s-8b-peer-tcp.json")).toMatchObject({ path: "peer" });
    expect(seconds("l40s-8b-lazy-tuned.json")).toBeLessThan(seconds("l40s-8b-pull.json"));
    expect(seconds("l40s-8b-peer-weights-only.json")).toBeLessThan(
      seconds("l40s-8b-lazy-tuned.json") / 2,
    );
    expect(seconds("l40s-8b-peer-tcp.json")).toBeLessThan(
      seconds("l40s-8b-peer-weights-only.json") / 2,
    );
    expect(seconds("p5-8b-peer-rdma.json")).toBeLessThan(seconds("l40s-8b-peer-tcp.json"));
  }, 60_000);
});
