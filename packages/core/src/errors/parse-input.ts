import type { z } from "zod";
import { AppError } from "./app-error.ts";

/**
 * Parses untrusted input with a zod schema; a failure becomes BAD_REQUEST naming the first
 * failing field (prefixed with `where`, e.g. "body") and listing every issue.
 */
export function parseInput<S extends z.ZodType>(
  schema: S,
  input: unknown,
  where = "input",
): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => {
    // zod reports an unknown key on its parent object; name the key itself.
    const unknownKey = issue.code === "unrecognized_keys" ? issue.keys[0] : undefined;
    const path = [where, ...issue.path.map(String), ...(unknownKey ? [unknownKey] : [])];
    return { path: path.join("."), message: issue.message };
  });
  const first = issues[0] ?? { path: where, message: "invalid" };
  throw new AppError("BAD_REQUEST", `${first.path}: ${first.message}`, {
    field: first.path,
    issues,
  });
}
