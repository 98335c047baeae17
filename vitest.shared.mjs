// The Vitest config every workspace package uses, imported by path (`../../vitest.shared.mjs`)
// so that no package depends on another for its tests' setup. Plain JavaScript with no
// imports: Vitest loads configs through Node, which cannot import TypeScript from elsewhere.

/**
 * The two projects of a package: `unit` (pure, beside the code) and `integration`
 * (`*.integration.test.ts`: real Postgres, Redis, containerd; one file at a time so the
 * 2-core machines are not oversubscribed). A package whose integration tests use the
 * database passes the template database's setup (`databaseTemplateSetup` from
 * `@thaw/db/vitest`): each file then clones its own database from the migrated template
 * that setup builds once per run.
 */
export function thawVitestProjects({ integrationGlobalSetup = [] } = {}) {
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
        globalSetup: integrationGlobalSetup,
        fileParallelism: false,
        testTimeout: 60_000,
        hookTimeout: 120_000,
      },
    },
  ];
}

/**
 * The reporters of a run. When THAW_TEST_REPORT_DIR is set (infra/dev/test.sh sets it), each
 * run also writes a JSON report there, which the script sums up into one closing
 * "N passed, N failed" line.
 */
export function thawVitestReporters(packageName) {
  const reportDir = process.env.THAW_TEST_REPORT_DIR;
  return reportDir
    ? [
        "default",
        ["json", { outputFile: `${reportDir}/${packageName}-${Date.now()}-${process.pid}.json` }],
      ]
    : ["default"];
}

/** A package's whole Vitest config: its two projects and the reporters. */
export function thawVitestConfig(packageName, options = {}) {
  return {
    test: { projects: thawVitestProjects(options), reporters: thawVitestReporters(packageName) },
  };
}
