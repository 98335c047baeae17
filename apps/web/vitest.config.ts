import { databaseTemplateSetup } from "@thaw/db/vitest";
import { defineConfig } from "vitest/config";
import { thawVitestConfig } from "../../vitest.shared.mjs";

export default defineConfig(
  thawVitestConfig("web", { integrationGlobalSetup: [databaseTemplateSetup] }),
);
