import type { DbClient } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import { AppError, parseInput } from "../errors/index.ts";
import { RegistryHost } from "./registry-credential-spec.ts";

/** Forgets the org's credential for a registry; another org's (or none) is a 404. */
export async function deleteRegistryCredential({
  actor,
  registry,
  db,
}: {
  actor: Actor;
  registry: unknown;
  db: DbClient;
}): Promise<{ registry: string; deleted: true }> {
  assertCan(actor, "registries:manage");
  const host = parseInput(RegistryHost, registry, "registry");
  return db.$transaction(async (tx) => {
    const row = await tx.registryCredential.findFirst({
      where: { ...orgScope(actor), registry: host },
      select: { id: true },
    });
    if (!row)
      throw new AppError("NOT_FOUND", `registry: the org has no credential for ${host}`, {
        field: "registry",
      });
    await tx.registryCredential.delete({ where: { id: row.id } });
    await recordAudit(tx, actor, {
      action: "registry_credential.deleted",
      targetType: "registry_credential",
      targetId: row.id,
      metadata: { registry: host },
    });
    return { registry: host, deleted: true as const };
  });
}
