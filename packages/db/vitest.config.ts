import { thawVitestConfig } from "./src/testing/vitest-projects.mjs";
import { defineConfig } from "vitest/config";

export default defineConfig(thawVitestConfig("db") as Parameters<typeof defineConfig>[0]);
