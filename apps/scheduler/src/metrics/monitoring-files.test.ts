import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

// infra/monitoring (the Grafana dashboard, the Prometheus alerting rules and their tests) must
// stay true to the metrics the code exports: every thaw_* name they query is declared by the
// agent's, the scheduler's or the web app's registry; every rule and dashboard query parses;
// and the alerts fire on the series they are written for (promtool test rules). promtool comes
// with Debian's `prometheus` package (infra/dev/test.sh unpacks it into .data and sets
// THAW_PROMTOOL); without it the promtool checks are skipped.

const ROOT = path.resolve(import.meta.dirname, "../../../..");
const MONITORING = path.join(ROOT, "infra/monitoring");
const promtoolPath = process.env.THAW_PROMTOOL ?? "promtool";
const promtool = spawnSync(promtoolPath, ["--version"]).status === 0 ? promtoolPath : null;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (name === "node_modules" || name.startsWith(".")) return [];
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return name.endsWith(".ts") && !name.includes(".test.") ? [full] : [];
  });
}

/** Every metric name a registry of ours declares (`name: "thaw_…"`). */
function declaredMetricNames(): Set<string> {
  const names = new Set<string>();
  for (const app of ["agent", "scheduler", "web"])
    for (const file of sourceFiles(path.join(ROOT, "apps", app, "src")))
      for (const match of readFileSync(file, "utf8").matchAll(/name: "(thaw_[a-z0-9_]+)"/g))
        names.add(match[1]!);
  return names;
}

interface DashboardPanel {
  title: string;
  targets?: { expr: string }[];
}

function dashboardQueries(): { title: string; expr: string }[] {
  const dashboard = JSON.parse(
    readFileSync(path.join(MONITORING, "grafana-dashboard.json"), "utf8"),
  ) as { panels: DashboardPanel[] };
  return dashboard.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({ title: p.title, expr: t.expr })),
  );
}

/** A Grafana query as Prometheus would receive it: its variables given plain values. */
function substituted(expr: string): string {
  return expr
    .replaceAll("$__rate_interval", "5m")
    .replaceAll("$path", ".*")
    .replaceAll("$gpu_model", ".*");
}

const queriedNames = (expr: string) =>
  [...expr.matchAll(/\b(thaw_[a-z0-9_]+)/g)].map((m) => m[1]!.replace(/_(bucket|count|sum)$/, ""));

describe("infra/monitoring", () => {
  const declared = declaredMetricNames();
  const rules = readFileSync(path.join(MONITORING, "thaw-alerts.yml"), "utf8")
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("#"))
    .join("\n");

  it("queries only metrics the code declares", () => {
    // The registries were found (a broken scan must not pass vacuously).
    for (const name of [
      "thaw_cold_starts_total",
      "thaw_http_requests_total",
      "thaw_agent_starts_total",
    ])
      expect(declared).toContain(name);
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThanOrEqual(15);
    for (const { title, expr } of queries)
      for (const name of queriedNames(expr)) expect(declared, `${title}: ${name}`).toContain(name);
    for (const name of queriedNames(rules))
      expect(declared, `thaw-alerts.yml: ${name}`).toContain(name);
  });

  it.skipIf(!promtool)("has alerting rules promtool accepts, and whose tests pass", () => {
    const run = (...args: string[]) =>
      execFileSync(promtool!, args, { cwd: MONITORING, encoding: "utf8", stdio: "pipe" });
    expect(run("check", "rules", "thaw-alerts.yml")).toMatch(/SUCCESS: 7 rules found/);
    expect(run("test", "rules", "thaw-alerts.test.yml")).toMatch(/SUCCESS/);
  });

  it.skipIf(!promtool)("has a dashboard whose every query is valid PromQL", () => {
    // promtool parses recording rules' expressions: one rule per dashboard query.
    const dir = mkdtempSync(path.join(tmpdir(), "thaw-dashboard-"));
    const file = path.join(dir, "dashboard-queries.yml");
    const queries = dashboardQueries();
    writeFileSync(
      file,
      [
        "groups:",
        "  - name: dashboard",
        "    rules:",
        ...queries.flatMap(({ expr }, i) => [
          `      - record: dashboard:query_${i}`,
          `        expr: ${JSON.stringify(substituted(expr))}`,
        ]),
      ].join("\n"),
    );
    const result = spawnSync(promtool!, ["check", "rules", file], { encoding: "utf8" });
    expect(result.stdout + result.stderr).toContain(`SUCCESS: ${queries.length} rules found`);
  });
});
