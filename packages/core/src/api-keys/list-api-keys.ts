import type { Db } from "@thaw/db";
import { z } from "zod";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";

/** What may be shown of a key: never its hash (and the secret is never stored at all). */
export const API_KEY_PUBLIC_FIELDS = {
  id: true,
  name: true,
  prefix: true,
  scopes: true,
  expiresAt: true,
  createdAt: true,
} as const;

/** A key as the dashboard lists it: prefix and metadata, never its hash. */
export const ApiKeyView = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  scopes: z.array(z.string()),
  expiresAt: z.date().nullable(),
  createdAt: z.date(),
  revokedAt: z.date().nullable(),
  lastUsedAt: z.date().nullable(),
});
export const ApiKeyList = z.array(ApiKeyView);
export type ApiKeyList = z.infer<typeof ApiKeyList>;

/** The org's keys, newest first — prefixes and metadata only; secrets are never stored. */
export async function listApiKeys({ actor, db }: { actor: Actor; db: Db }): Promise<ApiKeyList> {
  assertCan(actor, "api_keys:manage");
  return db.apiKey.findMany({
    where: orgScope(actor),
    orderBy: { createdAt: "desc" },
    take: 500,
    select: { ...API_KEY_PUBLIC_FIELDS, revokedAt: true, lastUsedAt: true },
  });
}
