import { z } from "zod";

// Names people give things (endpoints, keys, orgs, users, the hosts agents join) and free text
// stored beside them: one rule for all of them, zod only, so the browser can use it too.

const hasControlCharacter = (s: string) =>
  [...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

/**
 * Characters that make text read differently from what it is: bidirectional overrides and
 * isolates (a name that displays reversed, "Trojan Source") and zero-width characters (two
 * names that look the same).
 */
const DECEPTIVE_CHARACTERS = /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/;

/** A UTF-16 surrogate without its partner (String.prototype.isWellFormed, before ES2024). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * A trimmed single-line string: no NUL or other control characters (Postgres refuses NUL),
 * no lone UTF-16 surrogates (not text; the database refused them with a 500), nothing that
 * displays as something else.
 */
export function plainText(max: number) {
  // Blank is refused by the pattern (which the OpenAPI document states), not only by trimming.
  return z
    .string()
    .regex(/\S/, "must not be blank")
    .trim()
    .min(1)
    .max(max)
    .refine((s) => !hasControlCharacter(s), "control characters (e.g. NUL) are not allowed")
    .refine((s) => !LONE_SURROGATE.test(s), "lone surrogates are not text; send well-formed UTF-16")
    .refine(
      (s) => !DECEPTIVE_CHARACTERS.test(s),
      "bidirectional or zero-width characters are not allowed",
    );
}
