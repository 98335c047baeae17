import { plainText } from "@thaw/protocol";
import { z } from "zod";

// A registry credential as clients send it and as the API answers it (never with its secret):
// a registry's user and password or token, an ECR access key, or the org's Hugging Face token
// (for gated and private hf:// models; kept as the `huggingface.co` registry's credential).

/** `docker.io`, `ghcr.io`, `registry.example.com:5000`: a registry as image references name it. */
export const RegistryHost = z
  .string()
  .trim()
  .toLowerCase()
  .min(1)
  .max(253)
  .regex(
    /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$/,
    "a registry host as image references name it, e.g. ghcr.io or registry.example.com:5000",
  )
  .meta({ example: "ghcr.io" });

export const PutRegistryCredentialInput = z
  .discriminatedUnion("kind", [
    z
      .object({
        kind: z.literal("basic"),
        registry: RegistryHost,
        username: plainText(256),
        /** A password or an access token (GitHub, GitLab and Docker Hub issue these). */
        secret: z.string().min(1).max(4_096),
      })
      .strict(),
    z
      .object({
        kind: z.literal("ecr"),
        registry: RegistryHost.refine(
          (host) => /^\d{12}\.dkr\.ecr\.[a-z0-9-]+\.amazonaws\.com$/.test(host),
          "an ECR registry: <account>.dkr.ecr.<region>.amazonaws.com",
        ),
        /** An AWS access key id allowed ecr:GetAuthorizationToken and the pulls. */
        username: z.string().regex(/^[A-Z0-9]{16,128}$/, "an AWS access key id"),
        /** Its secret access key. */
        secret: z.string().min(16).max(256),
      })
      .strict(),
    z
      .object({
        kind: z.literal("huggingface"),
        /** The Hub (or the operator's mirror, THAW_HF_ENDPOINT): always `huggingface.co`. */
        registry: z.literal("huggingface.co").default("huggingface.co"),
        /** A read token of a user who accepted the gated models' terms. */
        secret: z.string().min(8).max(512),
      })
      .strict(),
  ])
  .meta({ id: "PutRegistryCredential" });
export type PutRegistryCredentialInput = z.output<typeof PutRegistryCredentialInput>;

export const RegistryCredentialView = z
  .object({
    id: z.uuid(),
    registry: z.string(),
    kind: z.enum(["basic", "ecr", "huggingface"]),
    username: z.string(),
    region: z.string().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: "RegistryCredential" });
export type RegistryCredentialView = z.infer<typeof RegistryCredentialView>;

export const RegistryCredentialList = z
  .object({ registryCredentials: z.array(RegistryCredentialView) })
  .meta({ id: "RegistryCredentialList" });

export function toRegistryCredentialView(row: {
  id: string;
  registry: string;
  kind: "basic" | "ecr" | "huggingface";
  username: string;
  region: string | null;
  createdAt: Date;
  updatedAt: Date;
}): RegistryCredentialView {
  return {
    id: row.id,
    registry: row.registry,
    kind: row.kind,
    username: row.username,
    region: row.region,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
