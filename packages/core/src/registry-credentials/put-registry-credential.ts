import type { DbClient } from "@thaw/db";
import { recordAudit } from "../audit/index.ts";
import { actorIdOf, assertCan, type Actor } from "../auth/index.ts";
import { isTrustedRegistry, nonPublicHostReason } from "../deployments/source-policy.ts";
import { AppError, parseInput } from "../errors/index.ts";
import {
  PutRegistryCredentialInput,
  toRegistryCredentialView,
  type RegistryCredentialView,
} from "./registry-credential-spec.ts";
import { credentialBinding, requireSealingKey, sealSecret } from "./sealed-secret.ts";

/**
 * Stores (or replaces) the org's credential for one registry, its secret sealed; the answer
 * and the audit entry name the registry and the user, never the secret.
 */
export async function putRegistryCredential({
  actor,
  input,
  db,
  sealingKey,
  where = "input",
}: {
  actor: Actor;
  input: unknown;
  db: DbClient;
  sealingKey: Buffer | null;
  where?: string;
}): Promise<RegistryCredentialView> {
  assertCan(actor, "registries:manage");
  const spec = parseInput(PutRegistryCredentialInput, input, where);
  const key = requireSealingKey(sealingKey);
  const hostname = new URL(`https://${spec.registry}`).hostname;
  const refused = isTrustedRegistry(spec.registry) ? null : nonPublicHostReason(hostname);
  if (refused)
    throw new AppError("UNPROCESSABLE", `${where}.registry: ${refused}`, {
      field: `${where}.registry`,
    });
  const region =
    spec.kind === "ecr"
      ? (/\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com$/.exec(spec.registry)?.[1] ?? null)
      : null;
  const fields = {
    kind: spec.kind,
    username: spec.kind === "huggingface" ? "token" : spec.username,
    sealedSecret: sealSecret(spec.secret, key, credentialBinding(actor.orgId, spec.registry)),
    region,
  };
  return db.$transaction(async (tx) => {
    const row = await tx.registryCredential.upsert({
      where: { orgId_registry: { orgId: actor.orgId, registry: spec.registry } },
      create: {
        orgId: actor.orgId,
        registry: spec.registry,
        createdById: actorIdOf(actor),
        ...fields,
      },
      update: fields,
    });
    await recordAudit(tx, actor, {
      action: "registry_credential.saved",
      targetType: "registry_credential",
      targetId: row.id,
      metadata: { registry: row.registry, kind: row.kind, username: row.username },
    });
    return toRegistryCredentialView(row);
  });
}
