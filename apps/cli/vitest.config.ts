import { thawVitestConfig } from "@thaw/db/vitest";
import { defineConfig } from "vitest/config";

export default defineConfig(thawVitestConfig("cli") as Parameters<typeof defineConfig>[0]);
