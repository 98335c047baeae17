import { defineConfig } from "vitest/config";
import { thawVitestConfig } from "../../vitest.shared.mjs";

export default defineConfig(thawVitestConfig("cli"));
