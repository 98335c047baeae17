import { databaseUrlEnv, presentEnv } from "@thaw/core/env";
import { z } from "zod";

export function loadCliEnv(source: NodeJS.ProcessEnv = process.env) {
  const parsed = z
    .object({
      DATABASE_URL: databaseUrlEnv,
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
