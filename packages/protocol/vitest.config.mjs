// Imported by path, not as @thaw/db: the protocol sits below every other package and
// depends on none of them (the shared Vitest config is plain JavaScript with no imports).
import { defineConfig } from "vitest/config";
import { thawVitestConfig } from "../db/src/testing/vitest-projects.mjs";

export default defineConfig(thawVitestConfig("protocol"));
