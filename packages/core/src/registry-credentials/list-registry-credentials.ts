import type { DbClient } from "@thaw/db";
import { assertCan, orgScope, type Actor } from "../auth/index.ts";
import {
  toRegistryCredentialView,
  type RegistryCredentialView,
} from "./registry-credential-spec.ts";

/** The org's registry credentials without their secrets, by registry. */
export async function listRegistryCredentials({
  actor,
  db,
}: {
  actor: Actor;
  db: DbClient;
}): Promise<{ registryCredentials: RegistryCredentialView[] }> {
  assertCan(actor, "registries:manage");
  const rows = await db.registryCredential.findMany({
    where: orgScope(actor),
    orderBy: { registry: "asc" },
    take: 500,
  });
  return { registryCredentials: rows.map(toRegistryCredentialView) };
}
