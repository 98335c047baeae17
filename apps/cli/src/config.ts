import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { z } from "zod";
import type { CliEnv } from "./env.ts";
import { CliError } from "./errors.ts";

// Where the CLI finds the API: flags, then THAW_URL / THAW_API_KEY, then what `thaw login`
// stored in the user's config dir (a file only its owner can read), then the local default.

export const DEFAULT_URL = "http://localhost:3000";

const StoredConfig = z.object({ url: z.url(), key: z.string().min(1) }).strict();
export type StoredConfig = z.infer<typeof StoredConfig>;

/** $XDG_CONFIG_HOME/thaw/config.json, else ~/.config/thaw/config.json. */
export function configPath(env: Pick<CliEnv, "XDG_CONFIG_HOME" | "HOME">): string {
  const base = env.XDG_CONFIG_HOME ?? (env.HOME ? join(env.HOME, ".config") : undefined);
  if (!base)
    throw new CliError("Neither XDG_CONFIG_HOME nor HOME is set: nowhere to keep the key.");
  return join(base, "thaw", "config.json");
}

export function readStoredConfig(path: string): StoredConfig | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  const parsed = StoredConfig.safeParse(JSON.parse(text));
  if (!parsed.success) throw new CliError(`${path} is not a thaw config: run 'thaw login' again.`);
  return parsed.data;
}

/** Writes the config readable by its owner alone (0600, in a 0700 directory). */
export function writeStoredConfig(path: string, config: StoredConfig): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}

export interface Target {
  url: string;
  key: string | undefined;
}

/** The API to talk to: flags win over the environment, which wins over the stored config. */
export function resolveTarget(
  flags: { url?: string | undefined },
  env: Pick<CliEnv, "THAW_URL" | "THAW_API_KEY">,
  stored: StoredConfig | undefined,
): Target {
  return {
    url: (flags.url ?? env.THAW_URL ?? stored?.url ?? DEFAULT_URL).replace(/\/+$/, ""),
    key: env.THAW_API_KEY ?? stored?.key,
  };
}
