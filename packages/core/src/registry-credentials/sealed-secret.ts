import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { AppError } from "../errors/index.ts";

// Secrets Thaw must give back to use (a registry password, an AWS secret key) cannot be
// hashed like API keys: they are sealed with AES-256-GCM under the operator's key
// (THAW_CREDENTIALS_KEY), with what the secret belongs to as additional data, so a sealed
// value copied onto another org's or registry's row does not open.

const VERSION = "v1";
const IV_BYTES = 12;
const KEY_BYTES = 32;

/** The operator's key from its env text (base64 of 32 random bytes), or null when unset. */
export function parseSealingKey(text: string | undefined): Buffer | null {
  if (!text) return null;
  const key = Buffer.from(text, "base64");
  if (key.length !== KEY_BYTES)
    throw new Error(
      `THAW_CREDENTIALS_KEY must be base64 of ${KEY_BYTES} random bytes (openssl rand -base64 32)`,
    );
  return key;
}

export function requireSealingKey(key: Buffer | null | undefined): Buffer {
  if (key) return key;
  throw new AppError(
    "UNAVAILABLE",
    "Registry credentials are off: the operator has not set THAW_CREDENTIALS_KEY (base64 of 32 random bytes).",
  );
}

export function sealSecret(plaintext: string, key: Buffer, boundTo: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(boundTo));
  const sealed = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [VERSION, ...[iv, cipher.getAuthTag(), sealed].map((p) => p.toString("base64"))].join(".");
}

/** The secret, or an error when the value was sealed under another key or for another row. */
export function openSealedSecret(sealed: string, key: Buffer, boundTo: string): string {
  const [version, iv, tag, body] = sealed.split(".");
  if (version !== VERSION || !iv || !tag || !body) throw new Error("not a sealed secret");
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64"));
  decipher.setAAD(Buffer.from(boundTo));
  decipher.setAuthTag(Buffer.from(tag, "base64"));
  return Buffer.concat([decipher.update(Buffer.from(body, "base64")), decipher.final()]).toString(
    "utf8",
  );
}

/** What a registry credential's secret is bound to. */
export const credentialBinding = (orgId: string, registry: string) =>
  `registry-credential:${orgId}:${registry}`;
