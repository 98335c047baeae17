import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The `sim:fidelity` contract (README's command list), exercised as a user runs it.
const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, "sim-fidelity.ts");
const tsx = join(here, "..", "..", "node_modules", ".bin", "tsx");
const run = (...args: string[]) => spawnSync(tsx, [cli, ...args], { encoding: "utf8" });

interface FidelityJson {
  cases: Array<{
    id: string;
    source: string;
    publishedSeconds: number;
    predictedSeconds: number;
    relativeError: number;
  }>;
  summary: {
    cases: number;
    sources: number;
    fitted: { medianAbsError: number; worstAbsError: number };
    crossValidated: { medianAbsError: number; worstAbsError: number };
  };
}

describe("pnpm --silent sim:fidelity", () => {
  it("--json prints one document: every case with its error, and the summary", () => {
    const result = run("--json");
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout) as FidelityJson;
    expect(report.summary.cases).toBe(report.cases.length);
    expect(report.cases.length).toBeGreaterThanOrEqual(25);
    expect(report.summary.sources).toBe(new Set(report.cases.map((c) => c.source)).size);
    expect(report.summary.sources).toBeGreaterThanOrEqual(6);
    for (const entry of report.cases) {
      expect(entry.relativeError).toBeCloseTo(
        (entry.predictedSeconds - entry.publishedSeconds) / entry.publishedSeconds,
        9,
      );
    }
    for (const summary of [report.summary.fitted, report.summary.crossValidated]) {
      expect(summary.worstAbsError).toBeGreaterThanOrEqual(summary.medianAbsError);
    }
  }, 600_000); // a leave-one-source-out refit per source: 2-4 min on a 2-core machine

  it("refuses an unknown argument with exit 2 and the usage", () => {
    const result = run("--jsn");
    expect(result.status).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/unknown argument --jsn; usage: pnpm --silent sim:fidelity/);
  });
});
