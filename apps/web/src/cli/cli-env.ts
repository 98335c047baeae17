import { databaseUrlEnv, presentEnv } from "@thaw/core/env";
import { z } from "zod";

/** The environment of the web app's command-line tools (not the server's: no auth secret needed). */
export function loadCliEnv(source: NodeJS.ProcessEnv = process.env) {
  const parsed = z
    .object({
      DATABASE_URL: databaseUrlEnv,
      /** The new owner's password; read from here or stdin, never from argv (ps shows argv). */
      THAW_OWNER_PASSWORD: z.string().optional(),
    })
    .safeParse(presentEnv(source));
  if (!parsed.success) {
    console.error(
      "DATABASE_URL is not set or malformed (source .data/services.env after 'bash infra/dev/services.sh').",
    );
    process.exit(2);
  }
  return parsed.data;
}
