import type { DbClient } from "@thaw/db";
import { z } from "zod";
import { recordAudit } from "../audit/index.ts";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import { AppError, parseInput } from "../errors/index.ts";

export const RevokeApiKeyInput = z.object({ id: z.uuid() }).strict();

export const RevokedApiKey = z.object({ id: z.string(), revokedAt: z.date().nullable() });
export type RevokedApiKey = z.infer<typeof RevokedApiKey>;

/** Revokes a key of the actor's org (idempotent); another org's key is NOT_FOUND. */
export async function revokeApiKey({
  actor,
  input,
  db,
}: {
  actor: Actor;
  input: unknown;
  db: DbClient;
}): Promise<RevokedApiKey> {
  assertCan(actor, "api_keys:manage");
  const { id } = parseInput(RevokeApiKeyInput, input);
  return db.$transaction(async (tx) => {
    const key = await tx.apiKey.findFirst({ where: { id, ...orgScope(actor) } });
    if (!key) throw new AppError("NOT_FOUND", `No API key ${id}.`, { field: "id" });
    if (key.revokedAt) return { id, revokedAt: key.revokedAt };
    const revoked = await tx.apiKey.update({ where: { id }, data: { revokedAt: new Date() } });
    await recordAudit(tx, actor, {
      action: "api_key.revoked",
      targetType: "api_key",
      targetId: id,
      metadata: { prefix: key.prefix },
    });
    return { id, revokedAt: revoked.revokedAt };
  });
}
