// Plain JavaScript on purpose: Vitest loads its config through Node, which cannot import
// TypeScript from another workspace package.
import { fileURLToPath } from "node:url";

/**
 * The two Vitest projects every package uses: `unit` (pure, beside the code) and
 * `integration` (`*.integration.test.ts`, real Postgres/Redis, one file at a time so the
 * 2-core machines are not oversubscribed; each file clones its own database from the
 * migrated template built once by the global setup).
 */
export function thawVitestProjects() {
  const globalSetup = fileURLToPath(new URL("./global-setup.ts", import.meta.url));
  return [
    {
      extends: true,
      test: {
        name: "unit",
        include: ["src/**/*.test.ts"],
        exclude: ["src/**/*.integration.test.ts", "**/node_modules/**"],
      },
    },
    {
      extends: true,
      test: {
        name: "integration",
        include: ["src/**/*.integration.test.ts"],
        globalSetup: [globalSetup],
        fileParallelism: false,
        testTimeout: 60_000,
        hookTimeout: 120_000,
      },
    },
  ];
}

/**
 * A package's whole Vitest config. When THAW_TEST_REPORT_DIR is set (the README's test
 * command sets it), each run also writes a JSON report there, which the command sums up
 * into one closing "N passed, N failed" line.
 */
export function thawVitestConfig(packageName) {
  const reportDir = process.env.THAW_TEST_REPORT_DIR;
  const reporters = reportDir
    ? [
        "default",
        ["json", { outputFile: `${reportDir}/${packageName}-${Date.now()}-${process.pid}.json` }],
      ]
    : ["default"];
  return { test: { projects: thawVitestProjects(), reporters } };
}
