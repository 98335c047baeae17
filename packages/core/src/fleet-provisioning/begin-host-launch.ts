import type { DbClient } from "@thaw/db";
import { HOST_PROFILES } from "../cold-start-model/host-profiles.ts";
import { issuePrefixedSecret } from "../crypto/secrets.ts";
import { JOIN_TOKEN_KIND } from "../fleet/create-join-token.ts";
import type { Offering } from "./plan-fleet-change.ts";

type Profile = {
  vcpus: number;
  registryNetworkGbps: number;
  disk: { readMiBps: number; writeMiBps: number };
  pcieGBps: number;
  registryRttMs: number;
  gpu?: { memoryGiB: number } | null;
};

/**
 * The first step of a launch: the node row the host will join as (state requested, the
 * offering's published figures until the agent reports its own) and the one-time join token
 * that names it, in one transaction. The token is returned once, for the host's user-data.
 */
export async function beginHostLaunch({
  db,
  orgId,
  provider,
  offering,
  tokenTtlSeconds,
  reason,
}: {
  db: DbClient;
  orgId: string;
  provider: "aws" | "sim";
  offering: Offering;
  tokenTtlSeconds: number;
  reason: string;
}): Promise<{ nodeId: string; joinToken: string }> {
  const profile = (HOST_PROFILES as Record<string, Profile | undefined>)[offering.instanceType];
  const { secret, prefix, hash } = issuePrefixedSecret(JOIN_TOKEN_KIND);
  return db.$transaction(async (tx) => {
    const node = await tx.node.create({
      data: {
        orgId,
        name: `${provider}-${offering.instanceType.replace(/\./g, "-")}-launching`,
        provider,
        runtime: provider === "sim" ? "sim" : "containerd",
        instanceType: offering.instanceType,
        zone: offering.zone,
        gpuModel: offering.gpuModel,
        gpuCount: offering.gpusPerHost,
        gpuMemoryGiB: profile?.gpu?.memoryGiB ?? 0,
        vcpus: profile?.vcpus ?? 0,
        networkGbps: profile?.registryNetworkGbps ?? 0,
        diskReadMiBps: profile?.disk.readMiBps ?? 0,
        diskWriteMiBps: profile?.disk.writeMiBps ?? 0,
        pcieGBps: profile?.pcieGBps ?? 0,
        registryRttMs: profile?.registryRttMs ?? 3,
        hourlyPriceUsd: offering.priceUsdPerHour,
        state: "requested",
        stateReason: reason,
        provisioned: true,
      },
      select: { id: true },
    });
    await tx.joinToken.create({
      data: {
        orgId,
        prefix,
        tokenHash: hash,
        nodeId: node.id,
        expiresAt: new Date(Date.now() + tokenTtlSeconds * 1000),
      },
    });
    await tx.auditLog.create({
      data: {
        orgId,
        actorType: "system",
        action: "node.launch_requested",
        targetType: "node",
        targetId: node.id,
        metadata: { instanceType: offering.instanceType, zone: offering.zone, reason },
      },
    });
    return { nodeId: node.id, joinToken: secret };
  });
}

/** A data volume as the provider provisioned it (EBS gp3: throughput and IOPS). */
export interface ProvisionedVolume {
  throughputMiBps: number;
  iops: number;
}

/** What the provider answered: the instance now exists, or no offering had capacity. */
export async function recordHostLaunch({
  db,
  nodeId,
  outcome,
}: {
  db: DbClient;
  nodeId: string;
  outcome:
    | {
        kind: "launched";
        instanceId: string;
        instanceType: string;
        zone: string;
        priceUsdPerHour: number;
        /** The data volume the provider attached (none: an instance-store host). */
        volume?: ProvisionedVolume | undefined;
      }
    | { kind: "failed"; reason: string };
}): Promise<void> {
  if (outcome.kind === "launched") {
    if (outcome.volume) {
      // Whether or not the host joined first: the agent does not know what was provisioned.
      await db.node.updateMany({
        where: { id: nodeId },
        data: {
          volumeThroughputMiBps: outcome.volume.throughputMiBps,
          volumeIops: outcome.volume.iops,
        },
      });
    }
    // The host may already have joined (a fast boot) and set its own instance id.
    await db.node.updateMany({
      where: { id: nodeId, instanceId: null },
      data: {
        instanceId: outcome.instanceId,
        instanceType: outcome.instanceType,
        zone: outcome.zone,
        hourlyPriceUsd: outcome.priceUsdPerHour,
      },
    });
    await db.node.updateMany({
      where: { id: nodeId, state: "requested" },
      data: { stateReason: `instance ${outcome.instanceId} booting` },
    });
    return;
  }
  await db.node.updateMany({
    where: { id: nodeId, state: "requested" },
    data: { state: "terminated", stateReason: outcome.reason },
  });
}
