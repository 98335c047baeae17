// The workspace's shared Vitest config, by path: the protocol depends on no other package.
import { defineConfig } from "vitest/config";
import { thawVitestConfig } from "../../vitest.shared.mjs";

export default defineConfig(thawVitestConfig("protocol"));
