export const packageRoot: string;
export function ensureDummyEngine(baseEnv: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
export function schemaForMigrationCli(schemaPath: string, name?: string): string;
export function runMigrationCli(args: string[], options?: { env?: NodeJS.ProcessEnv; capture?: boolean }): import("node:child_process").SpawnSyncReturns<string>;
export function sqlForDatamodel(schemaPath: string, env?: NodeJS.ProcessEnv): string;
