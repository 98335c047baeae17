import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import type { RunInstancesCommandInput, Tag } from "@aws-sdk/client-ec2";
import { type Offering, offeringKey, type ProvisionedVolume } from "@thaw/core";
import type { AwsFleetConfig } from "./aws-fleet-config.ts";

export const TAG_CLUSTER = "thaw:cluster";
export const TAG_NODE = "thaw:node-id";
export const TAG_ORG = "thaw:org-id";

/**
 * RunInstances' idempotency token for one node on one offering: a retry of the same launch
 * (after a timeout) reuses it, so EC2 answers with the first instance instead of a second.
 * At most 64 ASCII characters.
 */
export function launchClientToken(nodeId: string, offering: Offering): string {
  return `thaw-${createHash("sha256")
    .update(`${nodeId}|${offeringKey(offering)}`)
    .digest("hex")
    .slice(0, 40)}`;
}

export function hostTags(config: AwsFleetConfig, nodeId: string, orgId: string): Tag[] {
  return [
    { Key: TAG_CLUSTER, Value: config.clusterName },
    { Key: TAG_NODE, Value: nodeId },
    { Key: TAG_ORG, Value: orgId },
    { Key: "Name", Value: `thaw-${config.clusterName}-${nodeId.slice(0, 8)}` },
  ];
}

/** The data volume a host of this offering gets (none on instance-store types: RAID 0 there). */
export function dataVolumeFor(
  config: AwsFleetConfig,
  offering: Offering,
): ProvisionedVolume | undefined {
  if (config.localNvmeInstanceTypes.includes(offering.instanceType)) return undefined;
  return { throughputMiBps: config.dataVolume.throughputMiBps, iops: config.dataVolume.iops };
}

/** The RunInstances request for one GPU host: one instance, IMDSv2 only, tagged, with user-data. */
export function runInstancesInput(o: {
  config: AwsFleetConfig;
  offering: Offering;
  nodeId: string;
  orgId: string;
  userData: string;
}): RunInstancesCommandInput {
  const { config, offering } = o;
  const subnetId = config.subnetIdByZone[offering.zone];
  const tags = hostTags(config, o.nodeId, o.orgId);
  const volume = dataVolumeFor(config, offering);
  return {
    MinCount: 1,
    MaxCount: 1,
    ClientToken: launchClientToken(o.nodeId, offering),
    InstanceType: offering.instanceType as RunInstancesCommandInput["InstanceType"],
    ...(config.launchTemplate
      ? {
          LaunchTemplate: {
            ...(config.launchTemplate.id
              ? { LaunchTemplateId: config.launchTemplate.id }
              : { LaunchTemplateName: config.launchTemplate.name }),
            Version: config.launchTemplate.version,
          },
        }
      : {}),
    ...(config.imageId ? { ImageId: config.imageId } : {}),
    ...(subnetId ? { SubnetId: subnetId } : { Placement: { AvailabilityZone: offering.zone } }),
    ...(config.securityGroupIds.length ? { SecurityGroupIds: config.securityGroupIds } : {}),
    ...(config.instanceProfileArn
      ? { IamInstanceProfile: { Arn: config.instanceProfileArn } }
      : {}),
    // IMDSv2 only, and one hop: a bridged container on the host cannot reach it (host-network
    // tenant containers are kept from it by the bootstrap's firewall rule).
    MetadataOptions: {
      HttpTokens: "required",
      HttpEndpoint: "enabled",
      HttpPutResponseHopLimit: 1,
    },
    ...(!volume
      ? {}
      : {
          BlockDeviceMappings: [
            {
              DeviceName: config.dataVolume.deviceName,
              Ebs: {
                VolumeType: "gp3",
                VolumeSize: config.dataVolume.sizeGiB,
                Throughput: volume.throughputMiBps,
                Iops: volume.iops,
                DeleteOnTermination: true,
                Encrypted: true,
              },
            },
          ],
        }),
    TagSpecifications: [
      { ResourceType: "instance", Tags: tags },
      { ResourceType: "volume", Tags: tags },
    ],
    UserData: encodeUserData(o.userData),
  };
}

/** EC2's limit on user-data, before base64. */
export const USER_DATA_LIMIT_BYTES = 16 * 1024;

/**
 * cloud-init user-data as EC2 takes it: gzip (cloud-init detects and inflates it) then
 * base64. The GPU host template embeds the agent's unit and configs and is ~30 KB as text,
 * ~10 KB compressed, so compression is what keeps it under the 16 KiB limit.
 */
export function encodeUserData(text: string): string {
  const compressed = gzipSync(Buffer.from(text, "utf8"), { level: 9 });
  if (compressed.length > USER_DATA_LIMIT_BYTES) {
    throw new Error(
      `user-data is ${compressed.length} bytes gzipped, over EC2's ${USER_DATA_LIMIT_BYTES}-byte limit`,
    );
  }
  return compressed.toString("base64");
}
