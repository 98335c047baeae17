import { databaseUrlEnv, presentEnv } from "@thaw/core/env";
import { z } from "zod";

// The CLI's environment, parsed once (the only file that reads process.env).

const CliEnv = z.object({
  /** An API key; wins over the one `thaw login` stored. */
  THAW_API_KEY: z.string().min(1).optional(),
  /** The dashboard's URL; wins over the stored one. */
  THAW_URL: z.url({ error: "must be an absolute URL such as http://localhost:3000" }).optional(),
  XDG_CONFIG_HOME: z.string().min(1).optional(),
  HOME: z.string().min(1).optional(),
  /** For `thaw admin …` only: the control plane's database. */
  DATABASE_URL: databaseUrlEnv.optional(),
});
export type CliEnv = z.infer<typeof CliEnv>;

export function parseCliEnv(source: Record<string, string | undefined>): CliEnv {
  const parsed = CliEnv.safeParse(presentEnv(source));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw new Error(`${issue.path.join(".")} ${issue.message}`);
}

let cached: CliEnv | undefined;
export function cliEnv(): CliEnv {
  cached ??= parseCliEnv(process.env);
  return cached;
}

/** Whether THAW_DEBUG asks for stacks; read without failing on the rest of the environment. */
export function cliDebug(): boolean {
  const value = process.env.THAW_DEBUG;
  return value !== undefined && value !== "" && value !== "0" && value !== "false";
}
