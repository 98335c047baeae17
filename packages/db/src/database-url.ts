import { z } from "zod";

/**
 * DATABASE_URL as every process reads it: this package's own env.ts, and every app's through
 * @thaw/core/env (which re-exports it; the database package sits below core, so the rule
 * lives here). Zod only: importing it reads no environment.
 */
export const databaseUrlEnv = z
  .string({ error: "is not set (e.g. postgresql://user:password@127.0.0.1:5432/thaw)" })
  .regex(/^postgres(ql)?:\/\//, "must be a postgresql:// URL");
