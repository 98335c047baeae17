import { gunzipSync } from "node:zlib";
import { randomUUID } from "node:crypto";
import {
  DescribeInstanceAttributeCommand,
  DescribeInstancesCommand,
  DescribeVolumesCommand,
  type EC2Client,
  RunInstancesCommand,
  type RunInstancesCommandInput,
  type ServiceInputTypes,
  type ServiceOutputTypes,
} from "@aws-sdk/client-ec2";
import type { FinalizeRequestMiddleware } from "@smithy/types";
import type { Offering } from "@thaw/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMotoNetwork, type MotoServer, startMotoServer } from "../../testing/moto-server.ts";
import { AwsFleetConfig } from "./aws-fleet-config.ts";
import { AwsHostProvider } from "./aws-host-provider.ts";
import { TAG_CLUSTER, TAG_NODE } from "./run-instances-input.ts";

// The aws provider against moto's EC2 emulator with the real SDK: what it launches, how a
// retried launch stays one instance, the fallback over offerings, describe and terminate.

const L40S_A: Offering = {
  instanceType: "g6e.xlarge",
  zone: "us-east-1a",
  gpuModel: "L40S",
  gpusPerHost: 1,
  priceUsdPerHour: 1.86,
};
const L40S_B: Offering = { ...L40S_A, zone: "us-east-1b" };

describe("aws host provider (moto)", () => {
  let moto: MotoServer;
  let admin: EC2Client;
  let provider: AwsHostProvider;
  let config: AwsFleetConfig;
  const orgId = randomUUID();

  beforeAll(async () => {
    moto = await startMotoServer();
    const network = await createMotoNetwork(moto, ["us-east-1a", "us-east-1b"]);
    admin = network.admin;
    config = AwsFleetConfig.parse({
      region: "us-east-1",
      endpoint: moto.endpoint,
      clusterName: "thaw-test",
      imageId: network.imageId,
      subnetIdByZone: network.subnetIdByZone,
      securityGroupIds: [network.securityGroupId],
      maxAttempts: 3,
    });
    provider = new AwsHostProvider({
      config,
      userData: ({ nodeId, joinToken }) =>
        `#cloud-config\nwrite_files:\n  - path: /etc/thaw/agent.env\n    content: |\n      THAW_NODE=${nodeId}\n      THAW_JOIN_TOKEN=${joinToken}\n`,
      clientConfig: { credentials: moto.credentials },
    });
  }, 60_000);

  afterAll(async () => {
    admin?.destroy();
    provider?.ec2.destroy();
    await moto?.stop();
  });

  async function describeInstance(instanceId: string) {
    const answer = await admin.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
    return answer.Reservations![0]!.Instances![0]!;
  }

  it("launches a tagged host with IMDSv2 only, a gp3 data volume at 1,000 MiB/s and 16,000 IOPS, and its join token in user-data", async () => {
    const nodeId = randomUUID();
    const sent: RunInstancesCommandInput[] = [];
    provider.ec2.middlewareStack.add(
      (next, context) => (args) => {
        if (context.commandName === RunInstancesCommand.name) {
          sent.push(args.input as RunInstancesCommandInput);
        }
        return next(args);
      },
      { step: "initialize", name: "captureRunInstances" },
    );
    const launched = await provider
      .launch({ nodeId, orgId, offerings: [L40S_A], joinToken: "thawjoin_secret-one" })
      .finally(() => provider.ec2.middlewareStack.remove("captureRunInstances"));
    expect(launched).toMatchObject({ offering: L40S_A, adopted: false, unavailable: [] });

    const instance = await describeInstance(launched.instanceId);
    expect(instance.InstanceType).toBe("g6e.xlarge");
    expect(instance.Placement?.AvailabilityZone).toBe("us-east-1a");
    expect(instance.SubnetId).toBe(config.subnetIdByZone["us-east-1a"]);
    expect(instance.MetadataOptions?.HttpTokens).toBe("required");
    expect(instance.MetadataOptions?.HttpPutResponseHopLimit).toBe(1);
    const tags = Object.fromEntries(
      (instance.Tags ?? []).map((t) => [t.Key ?? "", t.Value ?? ""] as const),
    );
    expect(tags).toMatchObject({
      [TAG_CLUSTER]: "thaw-test",
      [TAG_NODE]: nodeId,
      "thaw:org-id": orgId,
    });

    const volumes = await admin.send(
      new DescribeVolumesCommand({
        Filters: [{ Name: "attachment.instance-id", Values: [launched.instanceId] }],
      }),
    );
    const data = volumes.Volumes!.find((v) => v.Attachments?.[0]?.Device === "/dev/sdf");
    expect(data).toMatchObject({ VolumeType: "gp3", Size: 500 });
    // moto stores gp3's baseline IOPS and no throughput whatever is asked, so the provisioned
    // figures are checked on the request the SDK sent.
    expect(sent).toHaveLength(1);
    expect(sent[0]!.BlockDeviceMappings).toEqual([
      {
        DeviceName: "/dev/sdf",
        Ebs: {
          VolumeType: "gp3",
          VolumeSize: 500,
          Throughput: 1_000,
          Iops: 16_000,
          DeleteOnTermination: true,
          Encrypted: true,
        },
      },
    ]);
    expect(sent[0]!.ClientToken).toMatch(/^thaw-[0-9a-f]{40}$/);

    const userData = await admin.send(
      new DescribeInstanceAttributeCommand({
        InstanceId: launched.instanceId,
        Attribute: "userData",
      }),
    );
    // Sent gzipped (cloud-init inflates it): the GPU host template is ~30 KB as text.
    const text = gunzipSync(Buffer.from(userData.UserData!.Value!, "base64")).toString("utf8");
    expect(text).toContain(`THAW_JOIN_TOKEN=thawjoin_secret-one`);
    expect(text).toContain(`THAW_NODE=${nodeId}`);
  });

  it("adopts the node's instance when a launch is retried, instead of starting a second", async () => {
    const nodeId = randomUUID();
    const request = { nodeId, orgId, offerings: [L40S_A, L40S_B], joinToken: "thawjoin_x" };
    const first = await provider.launch(request);
    const second = await provider.launch(request);
    expect(second).toMatchObject({ instanceId: first.instanceId, adopted: true });
    const mine = (await provider.listInstances()).filter((i) => i.nodeId === nodeId);
    expect(mine).toEqual([
      {
        instanceId: first.instanceId,
        nodeId,
        instanceType: "g6e.xlarge",
        zone: "us-east-1a",
        state: "running",
      },
    ]);
  });

  it("falls back to the next offering when EC2 has no capacity, without retrying the refusal", async () => {
    let refusals = 0;
    // EC2's answer for a zone out of capacity, injected where the network answer arrives
    // (inside the SDK's retry loop); moto itself never runs out.
    const refuseZoneA: FinalizeRequestMiddleware<ServiceInputTypes, ServiceOutputTypes> =
      (next, context) => async (args) => {
        const input = args.input as { InstanceType?: string; SubnetId?: string };
        if (
          context.commandName === RunInstancesCommand.name &&
          input.SubnetId === config.subnetIdByZone["us-east-1a"]
        ) {
          refusals++;
          throw Object.assign(
            new Error("We currently do not have sufficient g6e.xlarge capacity in us-east-1a."),
            { name: "InsufficientInstanceCapacity", $metadata: { httpStatusCode: 500 } },
          );
        }
        return next(args);
      };
    provider.ec2.middlewareStack.addRelativeTo(refuseZoneA, {
      name: "injectNoCapacity",
      relation: "after",
      toMiddleware: "thawOfferingUnavailable",
    });
    try {
      const launched = await provider.launch({
        nodeId: randomUUID(),
        orgId,
        offerings: [L40S_A, L40S_B],
        joinToken: "thawjoin_y",
      });
      expect(launched.offering).toEqual(L40S_B);
      expect((await describeInstance(launched.instanceId)).Placement?.AvailabilityZone).toBe(
        "us-east-1b",
      );
      expect(launched.unavailable).toEqual([
        {
          offering: L40S_A,
          reason: "InsufficientInstanceCapacity: EC2 has no capacity for this type in this zone",
        },
      ]);
      expect(refusals).toBe(1);

      await expect(
        provider.launch({ nodeId: randomUUID(), orgId, offerings: [L40S_A], joinToken: "t" }),
      ).rejects.toMatchObject({ name: "NoCapacityError" });
    } finally {
      provider.ec2.middlewareStack.remove("injectNoCapacity");
    }
  });

  it("terminates, and terminating again or an unknown instance is not an error", async () => {
    const nodeId = randomUUID();
    const { instanceId } = await provider.launch({
      nodeId,
      orgId,
      offerings: [L40S_B],
      joinToken: "thawjoin_z",
    });
    await provider.terminate([instanceId]);
    expect((await provider.listInstances()).map((i) => i.instanceId)).not.toContain(instanceId);
    await expect(provider.terminate([instanceId, "i-0000000000000dead"])).resolves.toBeUndefined();
  });

  it("lists only this cluster's instances", async () => {
    const foreign = await admin.send(
      new RunInstancesCommand({
        ImageId: config.imageId!,
        InstanceType: "m6in.2xlarge",
        MinCount: 1,
        MaxCount: 1,
        TagSpecifications: [
          { ResourceType: "instance", Tags: [{ Key: TAG_CLUSTER, Value: "someone-else" }] },
        ],
      }),
    );
    const listed = (await provider.listInstances()).map((i) => i.instanceId);
    expect(listed).not.toContain(foreign.Instances![0]!.InstanceId);
    expect(listed.length).toBeGreaterThan(0);
  });
});
