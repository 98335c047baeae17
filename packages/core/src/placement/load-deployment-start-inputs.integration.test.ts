import { directSql, prismaRows } from "@thaw/db";
import { DEMO_ENDPOINTS, demoDeploymentColumns } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { modelSizeBucket } from "../scheduling/index.ts";
import { loadDeploymentStartInputs, loadHistoryLookup } from "./load-placement-state.ts";
import { schedulingDeployment } from "./scheduling-inputs.ts";

// What placement reads of a deployment in one statement — its usable snapshots, its stored
// kernel caches and its history cells — from Postgres, through both ways the hot path and the
// rest of core read rows: only what may be used, exactly as stored (large byte counts, the
// full precision of the history's floats), and nothing of another deployment or org.

describe("loadDeploymentStartInputs", () => {
  let t: TestDatabase;
  let orgId: string;
  let deployment: ReturnType<typeof schedulingDeployment>;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await createTestDatabase();
    orgId = (await t.db.org.create({ data: { slug: "inputs", name: "Inputs" } })).id;
    const otherOrgId = (await t.db.org.create({ data: { slug: "other", name: "Other" } })).id;
    const model = DEMO_ENDPOINTS.find((e) => e.gpuType === "A10G")!.deployment;
    const endpoint = await t.db.endpoint.create({
      data: { orgId, slug: "e", name: "E", gpuType: "A10G", maxReplicas: 2 },
    });
    const deploymentRow = await t.db.deployment.create({
      data: {
        orgId,
        endpointId: endpoint.id,
        version: 1,
        ...demoDeploymentColumns(model),
        status: "active",
      },
    });
    const older = await t.db.deployment.create({
      data: { orgId, endpointId: endpoint.id, version: 0, ...demoDeploymentColumns(model) },
    });
    deployment = schedulingDeployment(deploymentRow);

    const snapshot = (
      deploymentId: string,
      status: "ready" | "quarantined" | "capturing" | "deleted",
      extra = {},
    ) =>
      t.db.snapshot.create({
        data: {
          orgId,
          deploymentId,
          gpuModel: "A10G",
          driverVersion: "550.54",
          cudaVersion: "12.4",
          location: "store",
          uri: "oci://store/s",
          bytes: 41n * 2n ** 30n + 7n,
          sleepLevel: 1,
          status,
          digest: `sha256:${"cd".repeat(32)}`,
          ...extra,
        },
      });
    ids.ready = (await snapshot(deploymentRow.id, "ready")).id;
    ids.quarantined = (
      await snapshot(deploymentRow.id, "quarantined", { location: "node", sleepLevel: 7 })
    ).id;
    await snapshot(deploymentRow.id, "capturing");
    await snapshot(deploymentRow.id, "deleted");
    await snapshot(deploymentRow.id, "ready", { digest: null });
    await snapshot(older.id, "ready");

    const cache = (deploymentId: string, status: "ready" | "capturing", driverVersion: string) =>
      t.db.kernelCache.create({
        data: {
          orgId,
          deploymentId,
          gpuModel: "A10G",
          driverVersion,
          status,
          uri: "oci://store/k",
          digest: `sha256:${"ef".repeat(32)}`,
          bytes: 3n * 2n ** 30n,
        },
      });
    ids.cache = (await cache(deploymentRow.id, "ready", "550.54")).id;
    await cache(deploymentRow.id, "capturing", "535.00");
    await cache(older.id, "ready", "550.54");

    const stat = (
      org: string,
      scope: "deployment" | "endpoint" | "fleet",
      scopeKey: string,
      meanLog: number,
    ) =>
      t.db.historyStat.create({
        data: {
          orgId: org,
          scope,
          scopeKey,
          path: "restore",
          locality: "cold",
          samples: 12,
          meanLog,
          m2Log: 0.1 + 0.2,
          predictionErrorLog: 1 / 3,
        },
      });
    await stat(orgId, "deployment", deploymentRow.id, Math.log(17.3));
    await stat(orgId, "endpoint", endpoint.id, Math.PI);
    await stat(orgId, "fleet", modelSizeBucket(deployment.modelBytes), Math.E);
    await stat(orgId, "deployment", older.id, 9);
    await stat(otherOrgId, "deployment", deploymentRow.id, 8);
  });
  afterAll(async () => {
    await t.drop();
  });

  it("reads the usable snapshots, the ready kernel caches and the history cells, exactly", async () => {
    for (const rows of [prismaRows(t.db), directSql(t.db).rows]) {
      const inputs = await loadDeploymentStartInputs(rows, orgId, deployment);
      expect(inputs.snapshots.map((s) => s.id).sort()).toEqual([ids.ready, ids.quarantined].sort());
      expect(inputs.snapshots.find((s) => s.id === ids.ready)).toEqual({
        id: ids.ready,
        deploymentId: deployment.id,
        gpuModel: "A10G",
        driverVersion: "550.54",
        cudaVersion: "12.4",
        status: "ready",
        bytes: 41 * 2 ** 30 + 7,
        sleepLevel: 1,
        inStore: true,
      });
      // A sleep level outside 0–2 is read as the nearest one; a node copy is not in the store.
      expect(inputs.snapshots.find((s) => s.id === ids.quarantined)).toMatchObject({
        status: "quarantined",
        sleepLevel: 2,
        inStore: false,
      });
      expect(inputs.kernelCaches).toEqual([
        { id: ids.cache, gpuModel: "A10G", driverVersion: "550.54", bytes: 3 * 2 ** 30 },
      ]);
      const cell = (meanLog: number) => ({
        samples: 12,
        meanLog,
        m2Log: 0.1 + 0.2,
        predictionErrorLog: 1 / 3,
      });
      expect(inputs.history("restore", "cold")).toEqual({
        deployment: cell(Math.log(17.3)),
        endpoint: cell(Math.PI),
        fleet: cell(Math.E),
      });
      expect(inputs.history("pull", "cold")).toEqual({});
      expect(inputs.history("restore", "image-cached")).toEqual({});
      // The history alone (snapshot capture reads only that) is the same.
      const history = await loadHistoryLookup(rows, orgId, deployment);
      expect(history("restore", "cold")).toEqual(inputs.history("restore", "cold"));
    }
  });

  it("reads empty lists for a deployment with nothing stored", async () => {
    // Of another model size too: the fleet's cells are shared by deployments of like size.
    expect(modelSizeBucket(1e12)).not.toBe(modelSizeBucket(deployment.modelBytes));
    const inputs = await loadDeploymentStartInputs(prismaRows(t.db), orgId, {
      ...deployment,
      id: "00000000-0000-7000-8000-000000000000",
      endpointId: "00000000-0000-7000-8000-000000000001",
      modelBytes: 1e12,
    });
    expect(inputs.snapshots).toEqual([]);
    expect(inputs.kernelCaches).toEqual([]);
    expect(inputs.history("restore", "cold")).toEqual({});
  });
});
