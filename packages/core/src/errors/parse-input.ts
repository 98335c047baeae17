import type { z } from "zod";
import { AppError } from "./app-error.ts";

/**
 * Parses untrusted input with a zod schema; a failure names the first failing field
 * (prefixed with `where`, e.g. "body"; with "" the field's own path, for an input whose
 * members name themselves) and lists every issue. Input the schema's JSON form
 * (the OpenAPI document) already refuses is BAD_REQUEST; input that only a rule written in
 * code refused (a refinement: layers adding up to imageBytes, min ≤ desired ≤ max, the
 * model-source policy) is UNPROCESSABLE, so a client can tell "not what the document says"
 * from "what the document says, refused by a rule it states in words".
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
    const path = [
      ...(where ? [where] : []),
      ...issue.path.map(String),
      ...(unknownKey ? [unknownKey] : []),
    ];
    return { path: path.join(".") || "input", message: issue.message };
  });
  const first = issues[0] ?? { path: where || "input", message: "invalid" };
  const byRuleOnly = result.error.issues.every((issue) => issue.code === "custom");
  throw new AppError(
    byRuleOnly ? "UNPROCESSABLE" : "BAD_REQUEST",
    `${first.path}: ${first.message}`,
    {
      field: first.path,
      issues,
    },
  );
}
