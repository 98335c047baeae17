// Plain JavaScript on purpose: Vitest configs are loaded through Node, which cannot import
// TypeScript from another workspace package.
import { fileURLToPath } from "node:url";

/**
 * The integration projects' global setup for packages whose tests use the database: it
 * builds the migrated template database once per run (global-setup.ts), and each test file
 * clones its own from it (useTestDatabase). Passed to the shared Vitest config
 * (vitest.shared.mjs at the repository's root) as `integrationGlobalSetup`.
 */
export const databaseTemplateSetup = fileURLToPath(new URL("./global-setup.ts", import.meta.url));
