import { z } from "zod";

// The database package's environment, parsed once. DATABASE_URL is optional here because
// generated-client imports must not fail at build time; readers call requireDatabaseUrl().
const Env = z.object({
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgresql:// URL")
    .optional(),
});

const parsed = Env.safeParse(process.env);
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
