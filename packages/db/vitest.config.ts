import { defineConfig } from "vitest/config";
import { thawVitestConfig } from "../../vitest.shared.mjs";
import { databaseTemplateSetup } from "./src/testing/vitest-setup.mjs";

export default defineConfig(
  thawVitestConfig("db", { integrationGlobalSetup: [databaseTemplateSetup] }),
);
