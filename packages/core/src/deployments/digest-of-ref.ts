import { createHash } from "node:crypto";

/**
 * A digest for a reference given without one: the hash of the reference itself (as the demo
 * catalog does), stable per ref, so that nodes holding the same tag are recognised as warm.
 */
export function digestOfRef(ref: string): string {
  return `sha256:${createHash("sha256").update(ref).digest("hex")}`;
}
