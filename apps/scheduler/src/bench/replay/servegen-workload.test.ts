import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POOL_MODELS, type Pool } from "./model-catalogue.ts";
import type { TraceRequest } from "@thaw/core/replay";
import { parseFleet } from "./replay-input.ts";
import {
  generateServeGenWorkload,
  stratify,
  WINDOW_SECONDS,
  type ServeGenWorkload,
} from "./servegen-workload.ts";

// A small ServeGen-shaped directory: six clients over the five pools, 14-day and 1-day files,
// gamma and Weibull fits, rates from 0.001 to 2 requests/s, idle windows between.

type Window = { rate: number; family: "Gamma" | "Weibull"; shape: number; scale: number } | null;

const POOL_DIRS: Record<Pool, string> = {
  "m-small": "language/m-small",
  "m-mid": "language/m-mid",
  "m-large": "language/m-large",
  "deepseek-r1": "reason/deepseek-r1",
  "mm-image": "multimodal/mm-image",
};

function writeClient(root: string, pool: Pool, client: number, windows: Window[]) {
  const lines = windows.map((w, i) =>
    w
      ? `${i * WINDOW_SECONDS},${w.rate},1.5,${w.family},${w.shape},${w.scale}`
      : `${i * WINDOW_SECONDS},0,0,,0,0`,
  );
  writeFileSync(join(root, POOL_DIRS[pool], `chunk-${client}-trace.csv`), lines.join("\n") + "\n");
}

function makeDirectory(clients: { pool: Pool; client: number; windows: Window[] }[]): string {
  const base = mkdtempSync(join(tmpdir(), "servegen-"));
  const root = join(base, "servegen");
  for (const dir of Object.values(POOL_DIRS)) mkdirSync(join(root, dir), { recursive: true });
  for (const c of clients) writeClient(root, c.pool, c.client, c.windows);
  writeFileSync(
    join(base, "AzureLLMInferenceTrace_conv.csv"),
    "TIMESTAMP,ContextTokens,GeneratedTokens\n" +
      "2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:50.9951690,396,109\n" +
      "2023-11-16 18:15:51.8640960,879,42\n2023-11-16 18:15:53.4528000,2000,300\n",
  );
  return root;
}

const days = (n: number, window: (i: number) => Window) =>
  Array.from({ length: n * 144 }, (_, i) => window(i));

const FIXTURE: { pool: Pool; client: number; windows: Window[] }[] = [
  {
    pool: "m-small",
    client: 0,
    windows: days(14, (i) =>
      i % 3 === 0 ? { rate: 0.5, family: "Gamma", shape: 0.3, scale: 10 } : null,
    ),
  },
  {
    pool: "m-mid",
    client: 4,
    windows: days(14, () => ({ rate: 0.05, family: "Weibull", shape: 0.8, scale: 5 })),
  },
  {
    pool: "m-large",
    client: 3,
    windows: days(14, (i) =>
      i % 2 === 0 ? { rate: 2, family: "Gamma", shape: 0.05, scale: 100 } : null,
    ),
  },
  {
    pool: "m-large",
    client: 7,
    windows: days(14, (i) =>
      i === 5 ? { rate: 0.001, family: "Weibull", shape: 1.2, scale: 900 } : null,
    ),
  },
  {
    pool: "deepseek-r1",
    client: 2,
    windows: days(1, (i) => (i < 72 ? { rate: 0.1, family: "Gamma", shape: 2, scale: 5 } : null)),
  },
  {
    pool: "mm-image",
    client: 1,
    windows: days(1, (i) =>
      i >= 100 ? { rate: 0.3, family: "Weibull", shape: 1.5, scale: 3 } : null,
    ),
  },
];

let dir: string;
beforeAll(() => {
  dir = makeDirectory(FIXTURE);
});
afterAll(() => rmSync(join(dir, ".."), { recursive: true, force: true }));

const windowOf = (endpoint: string, w: number): Window => {
  const fixture = FIXTURE.find((c) => `${c.pool}-${c.client}` === endpoint)!;
  return fixture.windows[w % fixture.windows.length]!;
};

function countsByWindow(requests: readonly TraceRequest[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of requests) {
    const key = `${r.endpoint}|${Math.floor(r.at / WINDOW_SECONDS)}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

describe("generateServeGenWorkload", () => {
  let workload: ServeGenWorkload;
  beforeAll(() => {
    workload = generateServeGenWorkload({ dir, days: 14, seed: 7, targetRequests: 100_000 });
  });

  it("is the same for the same seed and differs for another", () => {
    const again = generateServeGenWorkload({ dir, days: 14, seed: 7, targetRequests: 100_000 });
    expect(again.requests).toEqual(workload.requests);
    expect(again.endpoints).toEqual(workload.endpoints);
    const other = generateServeGenWorkload({ dir, days: 14, seed: 8, targetRequests: 100_000 });
    // Counts are rounded stochastically: another seed gives about as many.
    expect(Math.abs(other.requests.length - workload.requests.length)).toBeLessThan(
      0.02 * workload.requests.length,
    );
    expect(other.requests.map((r) => r.at)).not.toEqual(workload.requests.map((r) => r.at));
  });

  it("holds the target number of requests within 5%", () => {
    expect(Math.abs(workload.requests.length / 100_000 - 1)).toBeLessThan(0.05);
    expect(workload.clients.reduce((sum, c) => sum + c.requests, 0)).toBe(workload.requests.length);
  });

  it("is sorted by arrival", () => {
    let outOfOrder = 0;
    for (let i = 1; i < workload.requests.length; i++)
      if (workload.requests[i]!.at < workload.requests[i - 1]!.at) outOfOrder++;
    expect(outOfOrder).toBe(0);
  });

  it("keeps the window structure: about rate × 600 × scale requests inside each active window, none in an idle one", () => {
    const counts = countsByWindow(workload.requests);
    let expected = 0;
    let got = 0;
    for (const [key, count] of counts) {
      const [endpoint, w] = key.split("|") as [string, string];
      const window = windowOf(endpoint, Number(w));
      expect(window, `${key} is an idle window`).not.toBeNull();
      // Stochastic rounding: the floor or the ceiling of the window's expected count.
      const x = window!.rate * WINDOW_SECONDS * workload.scale;
      expect(count).toBeGreaterThanOrEqual(Math.floor(x));
      expect(count).toBeLessThanOrEqual(Math.ceil(x));
    }
    // Over every active window of the 14 days, as many as expected (well within 1%).
    for (const c of FIXTURE)
      for (let w = 0; w < 14 * 144; w++) {
        const window = windowOf(`${c.pool}-${c.client}`, w);
        if (window) expected += window.rate * WINDOW_SECONDS * workload.scale;
      }
    for (const count of counts.values()) got += count;
    expect(Math.abs(got - expected)).toBeLessThan(0.01 * expected);
  });

  it("repeats a one-day client's day cyclically", () => {
    const reasoning = workload.requests.filter((r) => r.endpoint === "deepseek-r1-2");
    const dayOf = (r: TraceRequest) => Math.floor(r.at / 86_400);
    expect(new Set(reasoning.map(dayOf)).size).toBe(14);
    for (const r of reasoning) expect(Math.floor(r.at / WINDOW_SECONDS) % 144).toBeLessThan(72);
    expect(workload.clients.find((c) => c.endpoint === "deepseek-r1-2")!.dataDays).toBe(1);
  });

  it("keeps a rare client's rate: its single active window yields a request as often as its rate says", () => {
    // m-large-7 is active in one window of its file; over seeds, the share of workloads with a
    // request there is its expected count (< 1), and the request is always in that window.
    const seeds = 40;
    let withRequest = 0;
    let expected = 0;
    for (let seed = 1; seed <= seeds; seed++) {
      const w = generateServeGenWorkload({ dir, days: 14, seed, targetRequests: 20_000 });
      const rare = w.requests.filter((r) => r.endpoint === "m-large-7");
      for (const r of rare) expect(Math.floor(r.at / WINDOW_SECONDS)).toBe(5);
      if (rare.length > 0) withRequest++;
      expected = windowOf("m-large-7", 5)!.rate * WINDOW_SECONDS * w.scale;
    }
    expect(expected).toBeLessThan(1);
    const sd = Math.sqrt(seeds * expected * (1 - expected));
    expect(Math.abs(withRequest - seeds * expected)).toBeLessThan(3 * sd + 1);
  }, 60_000);

  it("gives every endpoint a model of its pool and a full EndpointSpec the fleet parser accepts", () => {
    const fleetPath = join(dir, "..", "fleet.json");
    writeFileSync(
      fleetPath,
      JSON.stringify({
        hosts: [{ profile: "g5.xlarge", count: 1 }],
        endpoints: workload.endpoints,
      }),
    );
    const fleet = parseFleet(fleetPath);
    for (const client of workload.clients) {
      expect(POOL_MODELS[client.pool].map((o) => o.model)).toContain(client.model);
      // Equal to the generated spec: nothing was left for the fleet's defaults to fill.
      expect(fleet.endpoint(client.endpoint)).toEqual(workload.endpoints[client.endpoint]);
    }
  });

  it("gives reasoning requests long outputs: their service times dwarf the language ones", () => {
    const mean = (endpoint: string) => {
      const xs = workload.requests.filter((r) => r.endpoint === endpoint).map((r) => r.seconds);
      return xs.reduce((sum, x) => sum + x, 0) / xs.length;
    };
    expect(mean("deepseek-r1-2")).toBeGreaterThan(10 * mean("m-mid-4"));
  });

  it("samples endpoints stratified over the pools, deterministically", () => {
    const a = generateServeGenWorkload({
      dir,
      endpoints: 3,
      days: 1,
      seed: 3,
      targetRequests: 5000,
    });
    const b = generateServeGenWorkload({
      dir,
      endpoints: 3,
      days: 1,
      seed: 3,
      targetRequests: 5000,
    });
    expect(a.clients.map((c) => c.endpoint)).toEqual(b.clients.map((c) => c.endpoint));
    expect(a.clients).toHaveLength(3);
    // m-large has two of the six clients: a third of three endpoints is one.
    expect(a.clients.filter((c) => c.pool === "m-large")).toHaveLength(1);
  });

  it("refuses impossible sizes, naming the flag", () => {
    expect(() => generateServeGenWorkload({ dir, days: 14, targetRequests: 0 })).toThrow(
      /--target/,
    );
    expect(() => generateServeGenWorkload({ dir, endpoints: 7 })).toThrow(/--endpoints/);
    expect(() => generateServeGenWorkload({ dir, days: 0 })).toThrow(/--days/);
    expect(() => generateServeGenWorkload({ dir: join(dir, "missing") })).toThrow(/--dir/);
  });
});

describe("burstiness within a window", () => {
  let burstyDir: string;
  beforeAll(() => {
    // Two clients, one window each (repeated all day), the same rate: one fitted with a
    // very bursty gamma (shape 0.05, CV ≈ 4.5), one with a near-regular one (shape 50).
    burstyDir = makeDirectory([
      {
        pool: "m-small",
        client: 0,
        windows: [{ rate: 0.1, family: "Gamma", shape: 0.05, scale: 1 }],
      },
      {
        pool: "m-small",
        client: 1,
        windows: [{ rate: 0.1, family: "Gamma", shape: 50, scale: 1 }],
      },
    ]);
  });
  afterAll(() => rmSync(join(burstyDir, ".."), { recursive: true, force: true }));

  it("keeps the fit's burstiness when the scale leaves only ~20 arrivals a window", () => {
    const workload = generateServeGenWorkload({
      dir: burstyDir,
      days: 1,
      seed: 1,
      targetRequests: 2 * 144 * 20,
    });
    const gapCv = (endpoint: string) => {
      const cvs: number[] = [];
      for (let w = 0; w < 144; w++) {
        const at = workload.requests
          .filter((r) => r.endpoint === endpoint && Math.floor(r.at / WINDOW_SECONDS) === w)
          .map((r) => r.at);
        const gaps = at.slice(1).map((t, i) => t - at[i]!);
        const mean = gaps.reduce((s, g) => s + g, 0) / gaps.length;
        const sd = Math.sqrt(gaps.reduce((s, g) => s + (g - mean) ** 2, 0) / gaps.length);
        cvs.push(sd / mean);
      }
      return cvs.reduce((s, x) => s + x, 0) / cvs.length;
    };
    expect(workload.requests.filter((r) => r.endpoint === "m-small-0").length / 144).toBe(20);
    expect(gapCv("m-small-0")).toBeGreaterThan(2);
    expect(gapCv("m-small-1")).toBeLessThan(0.5);
  });
});

describe("stratify", () => {
  const servegen = {
    "m-small": 43,
    "m-mid": 109,
    "m-large": 162,
    "deepseek-r1": 73,
    "mm-image": 35,
  };

  it("splits 400 of ServeGen's 422 clients in proportion to the pools", () => {
    expect(stratify(servegen, 400)).toEqual({
      "m-small": 41,
      "m-mid": 103,
      "m-large": 154,
      "deepseek-r1": 69,
      "mm-image": 33,
    });
  });

  it("takes every client when asked for all, and never more than a pool has", () => {
    expect(stratify(servegen, 422)).toEqual(servegen);
    for (const total of [1, 5, 17, 100, 421]) {
      const counts = stratify(servegen, total);
      expect(Object.values(counts).reduce((s, x) => s + x, 0)).toBe(total);
      for (const pool of Object.keys(servegen) as Pool[])
        expect(counts[pool]).toBeLessThanOrEqual(servegen[pool]);
    }
  });
});
