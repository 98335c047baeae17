import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedDemo } from "./seed/seed-demo.ts";
import { createTestDatabase, type TestDatabase } from "./testing/index.ts";

describe("GPU reservations", () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(async () => {
    await t.drop();
  });

  it("a database constraint makes double-booking a GPU impossible, even under concurrent writers", async () => {
    const { orgId } = await seedDemo(t.db);
    const endpoint = await t.db.endpoint.findFirstOrThrow({
      where: { orgId },
      include: { activeDeployment: true },
    });
    const node = await t.db.node.create({
      data: {
        orgId,
        name: "n1",
        provider: "sim",
        runtime: "sim",
        instanceType: "g5.xlarge",
        gpuModel: "A10G",
        gpuCount: 1,
        vcpus: 4,
        networkGbps: 10,
        diskReadMiBps: 1000,
        diskWriteMiBps: 125,
        pcieGBps: 12,
      },
    });
    const replicas = await Promise.all(
      Array.from({ length: 8 }, () =>
        t.db.replica.create({
          data: { orgId, endpointId: endpoint.id, deploymentId: endpoint.activeDeployment!.id },
        }),
      ),
    );
    const results = await Promise.allSettled(
      replicas.map((r) =>
        t.db.gpuReservation.create({ data: { nodeId: node.id, gpuIndex: 0, replicaId: r.id } }),
      ),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(await t.db.gpuReservation.count({ where: { nodeId: node.id } })).toBe(1);
  });

  it("phase events are unique per (cold start, sequence), so telemetry ingest can be idempotent", async () => {
    const endpoint = await t.db.endpoint.findFirstOrThrow({ include: { activeDeployment: true } });
    const replica = await t.db.replica.create({
      data: {
        orgId: endpoint.orgId,
        endpointId: endpoint.id,
        deploymentId: endpoint.activeDeploymentId!,
      },
    });
    const coldStart = await t.db.coldStart.create({
      data: {
        orgId: endpoint.orgId,
        endpointId: endpoint.id,
        deploymentId: endpoint.activeDeploymentId!,
        replicaId: replica.id,
        path: "pull",
        locality: "cold",
        predictedSeconds: 120,
      },
    });
    const event = {
      coldStartId: coldStart.id,
      sequence: 1,
      phase: "pull" as const,
      startedAt: new Date(),
    };
    await t.db.phaseEvent.create({ data: event });
    await expect(t.db.phaseEvent.create({ data: event })).rejects.toThrow();
    const again = await t.db.phaseEvent.createMany({ data: [event], skipDuplicates: true });
    expect(again.count).toBe(0);
  });
});
