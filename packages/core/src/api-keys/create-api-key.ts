import type { DbClient } from "@thaw/db";
import { z } from "zod";
import { actorIdOf, API_KEY_SCOPES, assertCan, type Actor } from "../auth/index.ts";
import { recordAudit } from "../audit/index.ts";
import { issuePrefixedSecret } from "../crypto/index.ts";
import { parseInput } from "../errors/index.ts";
import {
  DEFAULT_ORG_QUOTAS,
  lockOrgQuotas,
  quotaExceeded,
  type OrgQuotas,
} from "../orgs/org-quotas.ts";
import { plainText } from "@thaw/protocol";
import { API_KEY_PUBLIC_FIELDS, ApiKeyView } from "./list-api-keys.ts";

/** Keys look like `thaw_<12 hex>_<43 chars>`: recognisable in a leak scan, prefix public. */
export const API_KEY_KIND = "thaw";

/** How long a key lives when its creator does not say. */
export const DEFAULT_API_KEY_DAYS = 90;

export const CreateApiKeyInput = z
  .object({
    name: plainText(100),
    scopes: z
      .array(z.enum(API_KEY_SCOPES))
      .min(1)
      .max(API_KEY_SCOPES.length)
      .refine((s) => new Set(s).size === s.length, "a scope appears twice"),
    /**
     * Omitted: DEFAULT_API_KEY_DAYS. A leaked key that nobody remembered to revoke stops
     * working on its own; a longer life is a choice the creator makes (up to ten years).
     */
    expiresInDays: z.number().int().min(1).max(3_650).default(DEFAULT_API_KEY_DAYS),
  })
  .strict();

/** A new key: its public fields and, this once, its secret. */
export const CreatedApiKey = ApiKeyView.omit({ revokedAt: true, lastUsedAt: true }).extend({
  secret: z.string(),
});
export type CreatedApiKey = z.infer<typeof CreatedApiKey>;

/** Creates an API key; the secret is in the answer and nowhere else, ever. */
export async function createApiKey({
  actor,
  input,
  db,
  quotas = DEFAULT_ORG_QUOTAS,
}: {
  actor: Actor;
  input: unknown;
  db: DbClient;
  /** What an org may hold unless the operator set its own (THAW_ORG_MAX_*). */
  quotas?: OrgQuotas;
}): Promise<CreatedApiKey> {
  assertCan(actor, "api_keys:manage");
  const parsed = parseInput(CreateApiKeyInput, input);
  const { secret, prefix, hash } = issuePrefixedSecret(API_KEY_KIND);
  const expiresAt = new Date(Date.now() + parsed.expiresInDays * 86_400_000);
  return db.$transaction(async (tx) => {
    // The org's row lock: two creations cannot both take the last key of the quota.
    const { quotas: own, orgSlug } = await lockOrgQuotas(tx, actor.orgId, quotas);
    const live = await tx.apiKey.count({
      where: {
        orgId: actor.orgId,
        revokedAt: null,
        OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }],
      },
    });
    if (live + 1 > own.apiKeys)
      throw quotaExceeded("apiKeys", own.apiKeys, live + 1, "name", "live API keys", orgSlug);
    const key = await tx.apiKey.create({
      data: {
        orgId: actor.orgId,
        name: parsed.name,
        prefix,
        hash,
        scopes: parsed.scopes,
        expiresAt,
        createdById: actorIdOf(actor),
      },
      select: API_KEY_PUBLIC_FIELDS,
    });
    await recordAudit(tx, actor, {
      action: "api_key.created",
      targetType: "api_key",
      targetId: key.id,
      metadata: { name: key.name, prefix, scopes: parsed.scopes },
    });
    return { ...key, secret };
  });
}
