import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/index.ts";
import { createEndpoint, getEndpointStatus } from "../endpoints/index.ts";
import { TEST_DEPLOYMENT } from "../testing/index.ts";
import { getDeploymentBreakdown } from "./get-deployment-breakdown.ts";
import { getEndpointDetail } from "./get-endpoint-detail.ts";

// The predictor's calibration as the endpoint page and REST's status answer show it: one
// figure over the endpoint's own recent succeeded starts that have a stored interval.

describe("an endpoint's prediction calibration", () => {
  let t: TestDatabase;
  let actor: Actor;
  let endpoint: { id: string; slug: string; deploymentId: string };
  let other: { id: string; slug: string; deploymentId: string };
  let orgId: string;

  beforeAll(async () => {
    t = await createTestDatabase();
    const seeded = await seedDemo(t.db);
    orgId = seeded.orgId;
    actor = { type: "user", userId: seeded.userId, orgId, role: "viewer" };
    const create = async (slug: string) => {
      const { result: e } = await createEndpoint({
        actor: { type: "system", orgId },
        input: { slug, name: slug, gpuType: "L40S", deployment: TEST_DEPLOYMENT },
        source: "api",
        db: t.db,
      });
      return { id: e.id, slug: e.slug, deploymentId: e.activeDeployment!.id };
    };
    endpoint = await create("calibrated");
    other = await create("elsewhere");
  });
  afterAll(async () => {
    await t.drop();
  });

  async function start(
    of: typeof endpoint,
    actualSeconds: number | null,
    interval: [number, number] | null,
    status: "succeeded" | "failed" = "succeeded",
  ) {
    const replica = await t.db.replica.create({
      data: { orgId, endpointId: of.id, deploymentId: of.deploymentId, state: "stopped" },
    });
    await t.db.coldStart.create({
      data: {
        orgId,
        endpointId: of.id,
        deploymentId: of.deploymentId,
        replicaId: replica.id,
        path: "pull",
        locality: "cold",
        // As a p90 endpoint records it: the objective's figure is the interval's top.
        predictedSeconds: interval ? interval[1] : 30,
        predictedMeanSeconds: interval ? 30 : null,
        predictedP10Seconds: interval?.[0] ?? null,
        predictedP90Seconds: interval?.[1] ?? null,
        status,
        actualSeconds,
      },
    });
  }

  it("is the share of succeeded starts inside their interval, with what it rests on", async () => {
    for (let i = 0; i < 17; i++) await start(endpoint, 25 + (i % 10), [20, 40]);
    await start(endpoint, 15, [20, 40]); // faster than p10
    await start(endpoint, 41, [20, 40]); // slower than p90
    await start(endpoint, 90, [20, 40]);
    // Not counted: a failure, a start from before intervals were kept, another endpoint's.
    await start(endpoint, 30, [20, 40], "failed");
    await start(endpoint, 500, null);
    for (let i = 0; i < 5; i++) await start(other, 500, [20, 40]);

    const expected = {
      starts: 20,
      inside: 17,
      faster: 1,
      slower: 2,
      insideShare: 0.85,
      verdict: "calibrated",
    };
    const detail = await getEndpointDetail({ actor, input: { endpoint: endpoint.slug }, db: t.db });
    expect(detail.calibration).toEqual({
      ...expected,
      target: { share: 0.8, tolerance: 0.05, minStarts: 20 },
    });
    const status = await getEndpointStatus({ actor, endpoint: endpoint.slug, db: t.db });
    expect(status.predictionCalibration).toEqual(expected);

    const elsewhere = await getEndpointStatus({ actor, endpoint: other.slug, db: t.db });
    expect(elsewhere.predictionCalibration).toMatchObject({
      starts: 5,
      insideShare: 0,
      verdict: "too-few-starts",
    });
  });

  it("plots predicted against actual as the mean's error, not the objective's quantile", async () => {
    const breakdown = await getDeploymentBreakdown({
      actor,
      input: { deploymentId: endpoint.deploymentId },
      db: t.db,
    });
    // 21 succeeded starts: 20 predicted with a mean of 30 s (p90 40 s), one from before the
    // mean was kept (its objective figure, 30 s).
    expect(breakdown.predictedVsActual).toHaveLength(21);
    expect(new Set(breakdown.predictedVsActual.map((p) => p.predictedSeconds))).toEqual(
      new Set([30]),
    );
  });
});
