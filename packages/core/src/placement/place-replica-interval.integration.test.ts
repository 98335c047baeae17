import { DEMO_ENDPOINTS, demoDeploymentColumns } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { placeReplica } from "./place-replica.ts";

// A placed cold start keeps its prediction whatever the endpoint's objective: the
// chosen option's mean and p10–p90 interval beside predictedSeconds (the objective's figure),
// which the dashboard shows and the predictor's calibration counts.

describe("placeReplica's stored prediction", () => {
  let t: TestDatabase;
  let orgId: string;

  beforeAll(async () => {
    t = await createTestDatabase();
    const org = await t.db.org.create({ data: { slug: "interval", name: "Interval" } });
    orgId = org.id;
    await t.db.node.create({
      data: {
        orgId,
        name: "interval-node",
        provider: "sim",
        runtime: "sim",
        instanceType: "g5.12xlarge",
        gpuModel: "A10G",
        gpuCount: 4,
        vcpus: 48,
        networkGbps: 40,
        diskReadMiBps: 1_000,
        diskWriteMiBps: 1_000,
        pcieGBps: 12,
        state: "ready",
        lastHeartbeatAt: new Date(),
        agentUrl: "http://127.0.0.1:9/agent",
      },
    });
  });
  afterAll(async () => {
    await t.drop();
  });

  async function placeOne(objective: "mean" | "p90") {
    const model = DEMO_ENDPOINTS.find((e) => e.gpuType === "A10G")!.deployment;
    const endpoint = await t.db.endpoint.create({
      data: {
        orgId,
        slug: `interval-${objective}`,
        name: objective,
        gpuType: "A10G",
        allowedPaths: ["pull"],
        objective,
      },
    });
    const deployment = await t.db.deployment.create({
      data: {
        orgId,
        endpointId: endpoint.id,
        version: 1,
        ...demoDeploymentColumns(model),
        status: "active",
      },
    });
    await t.db.endpoint.update({
      where: { id: endpoint.id },
      data: { activeDeploymentId: deployment.id },
    });
    const replica = await t.db.replica.create({
      data: { orgId, endpointId: endpoint.id, deploymentId: deployment.id, state: "pending" },
    });
    const result = await placeReplica({ db: t.db, replicaId: replica.id, random: () => 0.5 });
    expect(result.placed).toHaveLength(1);
    return t.db.coldStart.findFirstOrThrow({ where: { replicaId: replica.id } });
  }

  it.each(["mean", "p90"] as const)(
    "keeps the mean and the p10–p90 interval for a %s endpoint",
    async (objective) => {
      const start = await placeOne(objective);
      const {
        predictedMeanSeconds: mean,
        predictedP10Seconds: p10,
        predictedP90Seconds: p90,
      } = start;
      expect(mean).not.toBeNull();
      expect(p10).not.toBeNull();
      expect(p90).not.toBeNull();
      expect(p10!).toBeGreaterThan(0);
      expect(p10!).toBeLessThan(mean!);
      expect(mean!).toBeLessThan(p90!);
      // predictedSeconds stays the objective's figure.
      expect(start.predictedSeconds).toBeCloseTo(objective === "p90" ? p90! : mean!, 9);
    },
  );
});
