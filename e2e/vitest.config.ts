import { databaseTemplateSetup } from "@thaw/db/vitest";
import { defineConfig } from "vitest/config";
import { thawVitestReporters } from "../vitest.shared.mjs";

// Browser and API tests against the running stack; one file at a time (each starts a stack).
export default defineConfig({
  test: {
    reporters: thawVitestReporters("e2e"),
    include: ["src/**/*.e2e.test.ts"],
    globalSetup: [databaseTemplateSetup],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
