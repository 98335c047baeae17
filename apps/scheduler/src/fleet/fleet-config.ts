import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type ResolvedFleetPolicy, resolveFleetPolicy } from "@thaw/core";
import { CertSha256 } from "@thaw/protocol";
import { z } from "zod";
import { AwsFleetConfig } from "./aws/aws-fleet-config.ts";
import { AwsHostProvider } from "./aws/aws-host-provider.ts";
import { loadUserDataTemplate, renderUserData } from "./gpu-host-user-data.ts";
import type { HostProvider } from "./host-provider.ts";
import { SimHostProvider } from "./sim-host-provider.ts";

// THAW_FLEET_CONFIG: a JSON file with the fleet policy (core's FleetPolicy: provider,
// offerings, timings) and the chosen provider's section. Unset: the scheduler launches and
// retires nothing (hosts join by hand with join tokens).

const DEFAULT_TEMPLATE = fileURLToPath(
  new URL("../../../../infra/cloud-init/gpu-host.yaml", import.meta.url),
);

const SimSection = z
  .object({
    /** The sim agent process whose sim cloud launches hosts (its https listen URL). */
    cloudUrl: z.url({ protocol: /^https$/, message: "expected the sim agent's https:// URL" }),
    /**
     * SHA-256 of the sim agent's TLS certificate (`<state dir>/tls/agent-cert.pem`; the agent
     * logs it at start): the sim cloud is called over TLS pinned to it, like agents.
     */
    cloudCertSha256: CertSha256,
    /**
     * The data volume simulated hosts get, as the aws provider provisions one (its defaults:
     * gp3 at 1,000 MiB/s and 16,000 IOPS); `null`: none, hosts keep their type's default disk.
     */
    dataVolume: z
      .object({
        throughputMiBps: z.int().min(125).max(2_000).default(1_000),
        iops: z.int().min(3_000).max(80_000).default(16_000),
      })
      .strict()
      .nullable()
      .prefault({}),
  })
  .strict();

const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, "a hex SHA-256");

const AwsSection = z
  .object({
    /** Where agents reach the control plane (THAW_CONTROL_PLANE_URL on the host). */
    controlPlaneUrl: z.url({ protocol: /^https$|^http$/ }),
    /** cloud-init template with ${THAW_…} placeholders; default infra/cloud-init/gpu-host.yaml. */
    userDataTemplate: z.string().min(1).optional(),
    /** The agent bundle hosts install (infra/deploy/Dockerfile's agent-bundle target). */
    agentBundle: z
      .object({
        url: z.url({ protocol: /^https?$/ }),
        sha256: z.string().regex(/^[0-9a-f]{64}$/, "a hex SHA-256"),
      })
      .strict(),
    /**
     * The SHA-256 of each tool the GPU host bootstrap downloads, at the version pinned in
     * infra/cloud-init/scripts/thaw-bootstrap.sh: the host installs a download only when it
     * matches (and the bootstrap stops without them). The operator's to pin: compute each
     * from the file itself (infra/README.md), never from a checksum published beside it.
     */
    toolChecksums: z
      .object({
        /** stargz-snapshotter-<STARGZ_VERSION>-linux-amd64.tar.gz */
        stargzSnapshotter: Sha256Hex,
        /** node-v<NODE_VERSION>-linux-x64.tar.xz */
        nodejs: Sha256Hex,
        /** NVIDIA/cuda-checkpoint's bin/x86_64_Linux/cuda-checkpoint at CUDA_CHECKPOINT_REF */
        cudaCheckpoint: Sha256Hex,
      })
      .strict(),
    /** A registry reached over plain HTTP inside the VPC (empty: none). */
    registryHost: z
      .string()
      .regex(/^[A-Za-z0-9.-]+(:\d+)?$/, "host[:port]")
      .optional(),
    ec2: AwsFleetConfig,
  })
  .strict();

export interface FleetSetup {
  policy: ResolvedFleetPolicy;
  provider: HostProvider;
}

export class FleetConfigError extends Error {
  override readonly name = "FleetConfigError";
}

export function loadFleetSetup(
  file: string,
  env: { THAW_SIM_CLOUD_TOKEN?: string | undefined },
): FleetSetup {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new FleetConfigError(
      `THAW_FLEET_CONFIG ${file}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (typeof json !== "object" || json === null || Array.isArray(json))
    throw new FleetConfigError(`THAW_FLEET_CONFIG ${file}: expected a JSON object`);
  const { sim, aws, ...rest } = json as Record<string, unknown>;
  const resolved = resolveFleetPolicy(rest);
  if (!resolved.ok)
    throw new FleetConfigError(`THAW_FLEET_CONFIG ${file}:\n  ${resolved.errors.join("\n  ")}`);
  const { policy } = resolved;
  const fail = (what: string, issues: z.core.$ZodIssue[]) =>
    new FleetConfigError(
      `THAW_FLEET_CONFIG ${file}:\n  ${issues.map((i) => `${[what, ...i.path].join(".")}: ${i.message}`).join("\n  ")}`,
    );

  if (policy.provider === "sim") {
    const section = SimSection.safeParse(sim);
    if (!section.success) throw fail("sim", section.error.issues);
    const token = env.THAW_SIM_CLOUD_TOKEN;
    if (!token || token.length < 16)
      throw new FleetConfigError(
        "THAW_SIM_CLOUD_TOKEN: is not set (at least 16 characters; the sim agent's value)",
      );
    return {
      policy,
      provider: new SimHostProvider({
        cloudUrl: section.data.cloudUrl,
        cloudCertSha256: section.data.cloudCertSha256,
        token,
        bootSeconds: policy.bootSeconds,
        ...(section.data.dataVolume ? { dataVolume: section.data.dataVolume } : {}),
      }),
    };
  }

  const section = AwsSection.safeParse(aws);
  if (!section.success) throw fail("aws", section.error.issues);
  const { controlPlaneUrl, ec2, agentBundle, toolChecksums, registryHost } = section.data;
  const template = loadUserDataTemplate(section.data.userDataTemplate ?? DEFAULT_TEMPLATE);
  return {
    policy,
    provider: new AwsHostProvider({
      config: ec2,
      userData: ({ nodeId, joinToken, offering }) =>
        renderUserData(template, {
          THAW_CONTROL_PLANE_URL: controlPlaneUrl,
          THAW_JOIN_TOKEN: joinToken,
          THAW_NODE_ID: nodeId,
          THAW_INSTANCE_TYPE: offering.instanceType,
          THAW_CLUSTER: ec2.clusterName,
          THAW_AGENT_BUNDLE_URL: agentBundle.url,
          THAW_AGENT_BUNDLE_SHA256: agentBundle.sha256,
          THAW_REGISTRY_HOST: registryHost ?? "",
          THAW_STARGZ_SHA256: toolChecksums.stargzSnapshotter,
          THAW_NODE_SHA256: toolChecksums.nodejs,
          THAW_CUDA_CHECKPOINT_SHA256: toolChecksums.cudaCheckpoint,
        }),
    }),
  };
}
