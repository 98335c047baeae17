import type { SpawnSyncReturns } from "node:child_process";

export const packageRoot: string;
export function ensureDummyEngine(baseEnv: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
export function schemaForMigrationCli(schemaPath: string, name?: string): string;
export function runMigrationCli(
  args: string[],
  options?: { env?: NodeJS.ProcessEnv; capture?: boolean },
): SpawnSyncReturns<string>;
export function sqlForDatamodel(schemaPath: string, env?: NodeJS.ProcessEnv): string;
