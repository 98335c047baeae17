import { createApi, type Api } from "../api.ts";
import { configPath, readStoredConfig, resolveTarget, type Target } from "../config.ts";
import { cliEnv } from "../env.ts";

/** Options every API command takes. */
export interface GlobalOptions {
  url?: string;
  json?: boolean;
}

export interface ApiContext {
  api: Api;
  target: Target;
  json: boolean;
}

export function apiContext(options: GlobalOptions): ApiContext {
  const env = cliEnv();
  const target = resolveTarget(options, env, readStoredConfig(configPath(env)));
  return { api: createApi(target), target, json: options.json ?? false };
}
