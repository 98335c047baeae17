import { randomUUID } from "node:crypto";
import {
  DescribeInstancesCommand,
  type EC2Client,
  RunInstancesCommand,
  TerminateInstancesCommand,
} from "@aws-sdk/client-ec2";
import { replicaReasonData, replicaReasonText, resolveFleetPolicy } from "@thaw/core";
import { seedDemo } from "@thaw/db/seed";
import { useTestDatabase } from "@thaw/db/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AwsFleetConfig } from "../fleet/aws/aws-fleet-config.ts";
import { AwsHostProvider } from "../fleet/aws/aws-host-provider.ts";
import { TAG_CLUSTER, TAG_NODE } from "../fleet/aws/run-instances-input.ts";
import { OfferingAvailability } from "../fleet/offering-availability.ts";
import { createQueues, type SchedulerQueues } from "../queues.ts";
import { createProducerConnection } from "../redis.ts";
import { createMotoNetwork, type MotoServer, startMotoServer } from "../testing/moto-server.ts";
import { processFleet } from "./fleet-processor.ts";
import { createWorkerContext, type WorkerContext } from "./worker-context.ts";
import { TEST_AGENT_CALL_KEY } from "../testing/agent-call-keys.ts";

// The fleet worker with the aws provider against moto and Postgres: a launch for a replica
// that waits, no second launch while that host boots, the spend cap, and the garbage
// collector on instances that lost their row and rows that lost their instance.

describe("fleet worker with the aws provider (moto)", () => {
  const testDb = useTestDatabase();
  const prefix = `test-fleet-aws-${Date.now()}`;
  let moto: MotoServer;
  let admin: EC2Client;
  let producer: ReturnType<typeof createProducerConnection>;
  let queues: SchedulerQueues;
  let ctx: WorkerContext;
  let provider: AwsHostProvider;
  let availability: OfferingAvailability;
  let orgId: string;
  let endpointId: string;
  let deploymentId: string;

  const db = () => testDb.current.db;
  const waiting = () =>
    db().replica.create({
      data: {
        orgId,
        endpointId,
        deploymentId,
        state: "pending",
        ...replicaReasonData({ pendingCause: "waiting_for_capacity", gpus: 1, gpuType: "A10G" }),
      },
    });
  const instance = async (instanceId: string) =>
    (await admin.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] })))
      .Reservations![0]!.Instances![0]!;

  beforeAll(async () => {
    moto = await startMotoServer();
    const network = await createMotoNetwork(moto, ["us-east-1a", "us-east-1b"]);
    admin = network.admin;
    ({ orgId } = await seedDemo(db()));
    const endpoint = await db().endpoint.findFirstOrThrow({
      where: { orgId, slug: "llama-3-2-1b-gguf" },
      include: { deployments: true },
    });
    endpointId = endpoint.id;
    deploymentId = endpoint.deployments[0]!.id;
    producer = createProducerConnection(process.env.REDIS_URL!);
    await producer.connect();
    queues = createQueues(producer, prefix);
    const resolved = resolveFleetPolicy({
      provider: "aws",
      offerings: [
        { instanceType: "g5.xlarge", zone: "us-east-1a", priceUsdPerHour: 1.006 },
        { instanceType: "g5.xlarge", zone: "us-east-1b", priceUsdPerHour: 1.006 },
      ],
      pendingGraceSeconds: 0,
    });
    if (!resolved.ok) throw new Error(resolved.errors.join("; "));
    const config = AwsFleetConfig.parse({
      region: "us-east-1",
      endpoint: moto.endpoint,
      clusterName: "thaw-fleet-test",
      imageId: network.imageId,
      subnetIdByZone: network.subnetIdByZone,
      securityGroupIds: [network.securityGroupId],
    });
    provider = new AwsHostProvider({
      config,
      userData: ({ joinToken }) => `#cloud-config\n# ${joinToken}\n`,
      clientConfig: { credentials: moto.credentials },
    });
    availability = new OfferingAvailability(producer, prefix);
    ctx = createWorkerContext({
      db: db(),
      queues,
      log: pino({ level: "silent" }),
      agentCallKey: TEST_AGENT_CALL_KEY,
      fleet: { policy: resolved.policy, provider, availability },
    });
  }, 60_000);

  afterAll(async () => {
    await Promise.all(Object.values(queues ?? {}).map((q) => q.close()));
    producer?.disconnect();
    admin?.destroy();
    await moto?.stop();
  });

  it("launches one tagged host for a replica that waits, and not a second while it boots", async () => {
    await waiting();
    const first = (await processFleet(ctx, { orgId, reason: "sweep" })) as { launched: string[] };
    expect(first.launched).toHaveLength(1);
    const node = await db().node.findFirstOrThrow({ where: { provisioned: true } });
    expect(node).toMatchObject({
      provider: "aws",
      state: "requested",
      instanceId: first.launched[0],
      instanceType: "g5.xlarge",
      zone: "us-east-1a",
      runtime: "containerd",
      hourlyPriceUsd: 1.006,
    });
    const tags = Object.fromEntries(
      ((await instance(node.instanceId!)).Tags ?? []).map((t) => [t.Key ?? "", t.Value ?? ""]),
    );
    expect(tags).toMatchObject({ [TAG_CLUSTER]: "thaw-fleet-test", [TAG_NODE]: node.id });
    expect(await db().joinToken.count({ where: { nodeId: node.id, usedAt: null } })).toBe(1);

    const again = (await processFleet(ctx, { orgId, reason: "sweep" })) as { launched: string[] };
    expect(again.launched).toEqual([]);
  });

  it("stops at the org's spend cap and says so on the waiting replicas", async () => {
    await db().org.update({ where: { id: orgId }, data: { spendCapUsdPerHour: 1.5 } });
    const hook = await db().webhookSubscription.create({
      data: {
        id: crypto.randomUUID(),
        orgId,
        url: "https://hooks.example.com/cap",
        eventTypes: ["spend_cap.reached"],
        sealedSecret: "v1.x",
      },
    });
    const replica = await waiting();
    const result = (await processFleet(ctx, { orgId, reason: "sweep" })) as {
      launched: string[];
      blocked: { reason: string }[];
    };
    expect(result.launched).toEqual([]);
    expect(result.blocked[0]!.reason).toMatch(/^spend cap \$1\.5\/h reached/);
    const blocked = await db().replica.findUniqueOrThrow({ where: { id: replica.id } });
    expect(blocked.pendingCause).toBe("host_launch_blocked");
    expect(replicaReasonText(blocked)).toMatch(
      /^waiting for a A10G host: spend cap \$1\.5\/h reached/,
    );
    // The org hears of it once, however many sweeps find the cap reached.
    await processFleet(ctx, { orgId, reason: "sweep" });
    const deliveries = await db().webhookDelivery.findMany({ where: { subscriptionId: hook.id } });
    expect(deliveries.map((d) => d.eventType)).toEqual(["spend_cap.reached"]);
    expect(deliveries[0]!.payload).toMatchObject({
      data: { capUsdPerHour: 1.5, heldBack: [{ gpuModel: "A10G" }] },
    });
    await db().webhookSubscription.delete({ where: { id: hook.id } });
    await db().org.update({ where: { id: orgId }, data: { spendCapUsdPerHour: null } });
  });

  it("collects: closes the row of an instance terminated behind its back, terminates a tagged stray", async () => {
    const node = await db().node.findFirstOrThrow({
      where: { provisioned: true, provider: "aws" },
    });
    await admin.send(new TerminateInstancesCommand({ InstanceIds: [node.instanceId!] }));
    const stray = await admin.send(
      new RunInstancesCommand({
        ImageId: (await instance(node.instanceId!)).ImageId!,
        InstanceType: "g5.xlarge",
        MinCount: 1,
        MaxCount: 1,
        TagSpecifications: [
          {
            ResourceType: "instance",
            Tags: [
              { Key: TAG_CLUSTER, Value: "thaw-fleet-test" },
              { Key: TAG_NODE, Value: randomUUID() },
            ],
          },
        ],
      }),
    );
    const strayId = stray.Instances![0]!.InstanceId!;

    await processFleet(ctx, { reason: "gc" });
    expect(await db().node.findUniqueOrThrow({ where: { id: node.id } })).toMatchObject({
      state: "terminated",
      stateReason: `instance ${node.instanceId} no longer exists`,
    });
    expect((await instance(strayId)).State?.Name).toBe("terminated");
  });

  it("stops an org with no cap of its own at the fleet's default cap; the org's own cap overrides it", async () => {
    // THAW_FLEET_CONFIG as an operator writes it, without defaultSpendCapUsdPerHour: the
    // shipped default ($50/h) applies. Hosts at $20/h make it bite after two launches.
    const resolved = resolveFleetPolicy({
      provider: "aws",
      offerings: [{ instanceType: "g5.xlarge", zone: "us-east-1b", priceUsdPerHour: 20 }],
      pendingGraceSeconds: 0,
    });
    if (!resolved.ok) throw new Error(resolved.errors.join("; "));
    expect(resolved.policy.defaultSpendCapUsdPerHour).toBe(50);
    const pricey = createWorkerContext({
      db: db(),
      queues,
      log: pino({ level: "silent" }),
      agentCallKey: TEST_AGENT_CALL_KEY,
      fleet: { policy: resolved.policy, provider, availability },
    });
    expect((await db().org.findUniqueOrThrow({ where: { id: orgId } })).spendCapUsdPerHour).toBe(
      null,
    );
    // Earlier tests' hosts are gone (collected above); nothing of this org runs.
    expect(
      await db().node.count({ where: { orgId, provisioned: true, state: { not: "terminated" } } }),
    ).toBe(0);
    const replicas = await Promise.all(Array.from({ length: 6 }, () => waiting()));
    type Result = { launched: string[]; blocked: { reason: string }[] };

    const capped = (await processFleet(pricey, { orgId, reason: "sweep" })) as Result;
    expect(capped.launched).toHaveLength(2);
    expect(capped.blocked.map((b) => b.reason)).toEqual([
      "spend cap $50/h reached ($40.00/h running)",
    ]);
    const held = await db().replica.findUniqueOrThrow({ where: { id: replicas[5]!.id } });
    expect(held.pendingCause).toBe("host_launch_blocked");
    expect(replicaReasonText(held)).toMatch(/spend cap \$50\/h reached/);
    // A second sweep launches nothing more: the two hosts still count against the cap.
    const again = (await processFleet(pricey, { orgId, reason: "sweep" })) as Result;
    expect(again.launched).toEqual([]);

    // The org's own cap, above the default, lets it grow past $50/h and stops it at its own.
    await db().org.update({ where: { id: orgId }, data: { spendCapUsdPerHour: 90 } });
    const own = (await processFleet(pricey, { orgId, reason: "sweep" })) as Result;
    expect(own.launched).toHaveLength(2);
    expect(own.blocked.map((b) => b.reason)).toEqual([
      "spend cap $90/h reached ($80.00/h running)",
    ]);
    expect(
      await db().node.count({
        where: { orgId, provisioned: true, state: "requested", hourlyPriceUsd: 20 },
      }),
    ).toBe(4);
    await db().org.update({ where: { id: orgId }, data: { spendCapUsdPerHour: null } });
  });
});
