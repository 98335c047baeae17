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
      test: { name: "unit", include: ["src/**/*.test.ts"], exclude: ["src/**/*.integration.test.ts", "**/node_modules/**"] },
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
