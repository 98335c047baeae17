import { fileURLToPath } from "node:url";

/**
 * The two Vitest projects every package uses: `unit` (pure, beside the code) and
 * `integration` (`*.integration.test.ts`, real Postgres/Redis, one file at a time so the
 * 2-core machines are not oversubscribed).
 */
export function thawVitestProjects() {
  const globalSetup = fileURLToPath(new URL("./global-setup.ts", import.meta.url));
  return [
    {
      extends: true as const,
      test: { name: "unit", include: ["src/**/*.test.ts"], exclude: ["src/**/*.integration.test.ts", "**/node_modules/**"] },
    },
    {
      extends: true as const,
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
