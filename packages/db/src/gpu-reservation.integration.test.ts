import { describe, expect, it } from "vitest";
import { seedDemo } from "./seed/seed-demo.ts";
import { useTestDatabase } from "./testing/index.ts";

describe("GPU reservations", () => {
  const testDb = useTestDatabase();

  it("a database constraint makes double-booking a GPU impossible, even under concurrent writers", async () => {
    const { orgId } = await seedDemo(testDb.current.db);
    const endpoint = await testDb.current.db.endpoint.findFirstOrThrow({
      where: { orgId },
      include: { activeDeployment: true },
    });
    const node = await testDb.current.db.node.create({
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
        testDb.current.db.replica.create({
          data: { orgId, endpointId: endpoint.id, deploymentId: endpoint.activeDeployment!.id },
        }),
      ),
    );
    const results = await Promise.allSettled(
      replicas.map((r) =>
        testDb.current.db.gpuReservation.create({
          data: { nodeId: node.id, gpuIndex: 0, replicaId: r.id },
        }),
      ),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(await testDb.current.db.gpuReservation.count({ where: { nodeId: node.id } })).toBe(1);
  });

  it("phase events are unique per (cold start, sequence), so telemetry ingest can be idempotent", async () => {
    const endpoint = await testDb.current.db.endpoint.findFirstOrThrow({
      include: { activeDeployment: true },
    });
    const replica = await testDb.current.db.replica.create({
      data: {
        orgId: endpoint.orgId,
        endpointId: endpoint.id,
        deploymentId: endpoint.activeDeploymentId!,
      },
    });
    const coldStart = await testDb.current.db.coldStart.create({
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
    await testDb.current.db.phaseEvent.create({ data: event });
    await expect(testDb.current.db.phaseEvent.create({ data: event })).rejects.toThrow();
    const again = await testDb.current.db.phaseEvent.createMany({
      data: [event],
      skipDuplicates: true,
    });
    expect(again.count).toBe(0);
  });
});
