import type { DbClient } from "@thaw/db";
import { z } from "zod";
import type { Actor } from "../auth/index.ts";
import { recordAudit } from "../audit/index.ts";
import { AppError, parseInput } from "../errors/index.ts";
import { ORG_QUOTA_NAMES, ORG_QUOTA_SETTINGS, type OrgQuotas } from "./org-quotas.ts";

/** A number for the org's own quota, or null to fall back to the operator's default. */
const quota = (max: number) => z.number().int().min(0).max(max).nullable().optional();

export const SetOrgQuotasInput = z
  .object({
    endpoints: quota(100_000),
    apiKeys: quota(10_000),
    replicasPerEndpoint: quota(10_000),
    gpus: quota(1_000_000),
    /** USD per hour the org's launched hosts may cost; null: the fleet config's default. */
    spendCapUsdPerHour: z.number().min(0).max(10_000_000).nullable().optional(),
  })
  .strict()
  .refine((q) => Object.values(q).some((v) => v !== undefined), {
    message: "name at least one quota to set (a number, or null for the default)",
  });
export type SetOrgQuotasInput = z.infer<typeof SetOrgQuotasInput>;

/**
 * Sets one org's own quotas and spend cap: the operator's lever (`thaw admin org quota`), not
 * the org's — so only a system actor may. Holds from the org's next write (each check reads
 * them under the org's row lock). Audited with what was before and after.
 */
export async function setOrgQuotas({
  actor,
  input,
  db,
}: {
  actor: Actor;
  input: unknown;
  db: DbClient;
}): Promise<{
  quotas: { [K in keyof OrgQuotas]: number | null };
  spendCapUsdPerHour: number | null;
}> {
  if (actor.type !== "system")
    throw new AppError("FORBIDDEN", "Only the operator sets an org's quotas.");
  const parsed = parseInput(SetOrgQuotasInput, input);
  const data: Record<string, number | null> = {};
  for (const name of ORG_QUOTA_NAMES) {
    const value = parsed[name];
    if (value !== undefined) data[ORG_QUOTA_SETTINGS[name].column] = value;
  }
  if (parsed.spendCapUsdPerHour !== undefined) data.spendCapUsdPerHour = parsed.spendCapUsdPerHour;
  const select = {
    maxEndpoints: true,
    maxApiKeys: true,
    maxReplicasPerEndpoint: true,
    maxGpus: true,
    spendCapUsdPerHour: true,
  } as const;
  return db.$transaction(async (tx) => {
    const before = await tx.org.findUnique({ where: { id: actor.orgId }, select });
    if (!before) throw new AppError("NOT_FOUND", "No such org.");
    const after = await tx.org.update({ where: { id: actor.orgId }, data, select });
    await recordAudit(tx, actor, {
      action: "org.quotas_changed",
      targetType: "org",
      targetId: actor.orgId,
      metadata: { before, after },
    });
    return {
      quotas: {
        endpoints: after.maxEndpoints,
        apiKeys: after.maxApiKeys,
        replicasPerEndpoint: after.maxReplicasPerEndpoint,
        gpus: after.maxGpus,
      },
      spendCapUsdPerHour: after.spendCapUsdPerHour,
    };
  });
}
