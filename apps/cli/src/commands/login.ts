import { createInterface } from "node:readline/promises";
import { text } from "node:stream/consumers";
import { createApi, unwrap } from "../api.ts";
import { configPath, DEFAULT_URL, writeStoredConfig } from "../config.ts";
import { cliEnv } from "../env.ts";
import { CliError } from "../errors.ts";
import { emit } from "../output.ts";
import type { GlobalOptions } from "./context.ts";

/**
 * `thaw login`: checks a key against the API, then keeps it (and the URL) in the user's
 * config dir, readable by them alone. The key comes from --key-stdin, THAW_API_KEY or a
 * prompt, never from argv (which `ps` shows to every user of the machine).
 */
export async function login(options: GlobalOptions & { keyStdin?: boolean }): Promise<void> {
  const env = cliEnv();
  const url = (options.url ?? env.THAW_URL ?? DEFAULT_URL).replace(/\/+$/, "");
  let key = env.THAW_API_KEY;
  if (options.keyStdin) key = (await text(process.stdin)).trim();
  else if (!key) {
    if (!process.stdin.isTTY)
      throw new CliError("No key: pipe it with --key-stdin, or set THAW_API_KEY.");
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    key = (await rl.question(`API key for ${url} (thaw_…): `)).trim();
    rl.close();
  }
  if (!key) throw new CliError("No key given.");
  const api = createApi({ url, key });
  const { endpoints } = await unwrap(api.GET("/api/v1/endpoints"), url);
  const path = configPath(env);
  writeStoredConfig(path, { url, key });
  emit(
    options.json ?? false,
    { url, configPath: path, endpoints: endpoints.length },
    () =>
      `Logged in to ${url}: the key sees ${endpoints.length} endpoints. Saved to ${path} (mode 0600).`,
  );
}
