import type { z } from "zod";

/**
 * Runs a rule over several fields of an object as soon as those fields parsed, whatever else
 * failed. zod skips an object's refinements once any of its fields failed to parse (a size
 * not given yet), so the deploy wizard, which validates one step at a time with these
 * schemas, would otherwise not see the rule until every later step was filled. An answer's
 * first issue stays what it was: a field's own issues come before the object's rules.
 */
export function whenFieldsParsed(...fields: string[]) {
  return {
    when: (payload: z.core.ParsePayload) =>
      typeof payload.value === "object" &&
      payload.value !== null &&
      !payload.issues.some((issue) => fields.includes(String(issue.path?.[0]))),
  };
}
