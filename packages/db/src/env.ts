import { z } from "zod";
import { databaseUrlEnv } from "./database-url.ts";

// The database package's environment, parsed once. DATABASE_URL is optional here because
// generated-client imports must not fail at build time; readers call requireDatabaseUrl().
// Empty counts as unset, as in every app's env.ts (@thaw/core/env's presentEnv: this package
// sits below core, so it says it once more here).
const Env = z.object({ DATABASE_URL: databaseUrlEnv.optional() });

const parsed = Env.safeParse({ DATABASE_URL: process.env.DATABASE_URL || undefined });
if (!parsed.success) {
  const issue = parsed.error.issues[0];
  throw new Error(
    `Environment variable ${String(issue?.path[0])} ${issue?.message ?? "is invalid"}.`,
  );
}
export const dbEnv = parsed.data;

export function requireDatabaseUrl(): string {
  if (!dbEnv.DATABASE_URL) {
    throw new Error(
      "DATABASE_URL is not set. Example: postgresql://postgres:postgres@127.0.0.1:5432/thaw (bash infra/dev/services.sh starts one).",
    );
  }
  return dbEnv.DATABASE_URL;
}
