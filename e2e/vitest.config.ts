import { thawVitestConfig } from "@thaw/db/vitest";
import { defineConfig } from "vitest/config";

// Browser and API tests against the running stack; one file at a time (each starts a stack).
const base = thawVitestConfig("e2e");
export default defineConfig({
  test: {
    reporters: base.test.reporters as never,
    include: ["src/**/*.e2e.test.ts"],
    globalSetup: [new URL("../packages/db/src/testing/global-setup.ts", import.meta.url).pathname],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
