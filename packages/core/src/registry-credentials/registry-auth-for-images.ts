import { ECRClient, GetAuthorizationTokenCommand } from "@aws-sdk/client-ecr";
import type { Db } from "@thaw/db";
import { parseImageReference } from "../images/image-reference.ts";
import { credentialBinding, openSealedSecret } from "./sealed-secret.ts";

// What the org's stored credentials give for pulling or inspecting some images: a username
// and password per registry, opened in memory for the one use and never stored again. An
// ECR credential is traded for a registry token (GetAuthorizationToken; valid 12 hours).

export interface RegistryAuth {
  registry: string;
  username: string;
  password: string;
  /** When the password stops working (an ECR token); absent for a stored password. */
  expiresAt?: string;
}

export interface RegistryAuthOptions {
  db: Db;
  orgId: string;
  imageRefs: readonly string[];
  sealingKey: Buffer | null;
  /** An ECR API endpoint (moto in tests); unset: AWS's for the registry's region. */
  ecrEndpoint?: string;
}

export async function registryAuthForImages(o: RegistryAuthOptions): Promise<RegistryAuth[]> {
  const registries = [
    ...new Set(o.imageRefs.map((ref) => parseImageReference(ref)?.registry).filter(Boolean)),
  ] as string[];
  if (registries.length === 0 || !o.sealingKey) return [];
  const rows = await o.db.registryCredential.findMany({
    where: { orgId: o.orgId, registry: { in: registries }, kind: { not: "huggingface" } },
  });
  const key = o.sealingKey;
  return Promise.all(
    rows.map(async (row): Promise<RegistryAuth> => {
      const secret = openSealedSecret(
        row.sealedSecret,
        key,
        credentialBinding(o.orgId, row.registry),
      );
      if (row.kind !== "ecr")
        return { registry: row.registry, username: row.username, password: secret };
      return ecrAuth(row.registry, row.region ?? "us-east-1", row.username, secret, o.ecrEndpoint);
    }),
  );
}

async function ecrAuth(
  registry: string,
  region: string,
  accessKeyId: string,
  secretAccessKey: string,
  endpoint: string | undefined,
): Promise<RegistryAuth> {
  const client = new ECRClient({
    region,
    credentials: { accessKeyId, secretAccessKey },
    ...(endpoint && { endpoint }),
    maxAttempts: 2,
  });
  try {
    const answer = await client.send(new GetAuthorizationTokenCommand({}));
    const data = answer.authorizationData?.[0];
    const decoded = Buffer.from(data?.authorizationToken ?? "", "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 1) throw new Error(`ECR gave no authorization token for ${registry}`);
    return {
      registry,
      username: decoded.slice(0, colon),
      password: decoded.slice(colon + 1),
      ...(data?.expiresAt && { expiresAt: data.expiresAt.toISOString() }),
    };
  } finally {
    client.destroy();
  }
}

/** The registry name the org's Hugging Face token is kept under. */
export const HUGGING_FACE_REGISTRY = "huggingface.co";

/** The org's Hugging Face token, opened for one sizing of a gated or private hf:// model. */
export async function huggingFaceTokenFor(o: {
  db: Db;
  orgId: string;
  sealingKey: Buffer | null;
}): Promise<string | undefined> {
  if (!o.sealingKey) return undefined;
  const row = await o.db.registryCredential.findFirst({
    where: { orgId: o.orgId, registry: HUGGING_FACE_REGISTRY, kind: "huggingface" },
  });
  return row
    ? openSealedSecret(row.sealedSecret, o.sealingKey, credentialBinding(o.orgId, row.registry))
    : undefined;
}
