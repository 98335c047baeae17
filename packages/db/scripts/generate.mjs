// Runs `prisma generate` (Prisma 7 CLI) without a network: the CLI only checks that a
// schema-engine binary *exists* before generating, and the generated TypeScript client
// talks to Postgres through @prisma/adapter-pg, so no native engine is ever needed.
// On machines that can download engines this is just `prisma generate`.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureDummyEngine } from "./prisma-offline.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const env = ensureDummyEngine(process.env);
const result = spawnSync("pnpm", ["exec", "prisma", "generate"], {
  cwd: root,
  env,
  stdio: "inherit",
});
process.exit(result.status ?? 1);
