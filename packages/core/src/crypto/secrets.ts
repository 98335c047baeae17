import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** SHA-256 hex. Secrets we issue are 256-bit random, so a fast hash is the right tool here. */
export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

/**
 * A secret with a recognisable, public prefix: `<kind>_<prefix>_<secret>`. The prefix finds
 * the row; only the hash of the whole string is stored.
 */
export function issuePrefixedSecret(kind: string): {
  secret: string;
  prefix: string;
  hash: string;
} {
  const prefix = randomBytes(6).toString("hex");
  const secret = `${kind}_${prefix}_${randomToken()}`;
  return { secret, prefix, hash: sha256Hex(secret) };
}

export function parsePrefixedSecret(kind: string, secret: string): { prefix: string } | null {
  const match = new RegExp(`^${kind}_([0-9a-f]{12})_[A-Za-z0-9_-]{20,}$`).exec(secret);
  return match?.[1] ? { prefix: match[1] } : null;
}

export function hashesEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, "hex");
  const y = Buffer.from(b, "hex");
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Whether an Authorization header carries `Bearer <secret>`, compared in constant time (over
 * digests, so the lengths leak nothing either). The operator's /metrics tokens use it.
 */
export function bearerMatches(header: string | null | undefined, secret: string): boolean {
  const presented = /^Bearer\s+(\S+)$/i.exec(header ?? "")?.[1] ?? "";
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(presented), digest(secret)) && presented.length > 0;
}
