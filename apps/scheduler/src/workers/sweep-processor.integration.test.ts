import { DEMO_ENDPOINTS, demoDeploymentColumns } from "@thaw/db/seed";
import { useTestDatabase } from "@thaw/db/testing";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { useTestQueues } from "../testing/test-queues.ts";
import { TEST_AGENT_CALL_KEY } from "../testing/agent-call-keys.ts";
import { processSweep } from "./sweep-processor.ts";
import { createWorkerContext, type WorkerContext } from "./worker-context.ts";

// One sweep job is a slice of endpoints, run one after the other on real Postgres and Redis:
// each is reconciled (a shortfall becomes replicas), and one endpoint's failure neither stops
// the others nor passes unseen.

describe("the sweep's slice job", () => {
  const testDb = useTestDatabase();
  const prefix = `test-sweep-slice-${Date.now()}`;
  const redis = useTestQueues(prefix);
  const db = () => testDb.current.db;

  /** Endpoints that want one replica each, with no node to place it on. */
  async function endpointsWantingOne(slug: string, count: number): Promise<string[]> {
    const org = await db().org.create({ data: { slug, name: slug } });
    const model = DEMO_ENDPOINTS.find((e) => e.gpuType === "A10G")!.deployment;
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const endpoint = await db().endpoint.create({
        data: {
          orgId: org.id,
          slug: `${slug}-${i}`,
          name: `${slug}-${i}`,
          gpuType: "A10G",
          desiredReplicas: 1,
        },
      });
      const deployment = await db().deployment.create({
        data: {
          orgId: org.id,
          endpointId: endpoint.id,
          version: 1,
          ...demoDeploymentColumns(model),
          status: "active",
        },
      });
      await db().endpoint.update({
        where: { id: endpoint.id },
        data: { activeDeploymentId: deployment.id },
      });
      ids.push(endpoint.id);
    }
    return ids;
  }
  const replicasOf = (endpointId: string) => db().replica.count({ where: { endpointId } });
  const context = (): WorkerContext =>
    createWorkerContext({
      db: db(),
      queues: redis.queues,
      log: pino({ level: "silent" }),
      agentCallKey: TEST_AGENT_CALL_KEY,
    });

  it("reconciles every endpoint of the slice, and reports what it placed", async () => {
    const ids = await endpointsWantingOne("slice", 3);
    const result = await processSweep(context(), { endpointIds: ids });
    expect(result.swept).toBe(3);
    for (const id of ids) expect(await replicasOf(id)).toBe(1);
    // No node anywhere: each scale-up's placement was tried and found nothing feasible.
    expect(result.placements.map((p) => p.kind)).toEqual([
      "unplaceable",
      "unplaceable",
      "unplaceable",
    ]);
  });

  it("goes on past an endpoint whose work fails, then fails the job naming it", async () => {
    const ids = await endpointsWantingOne("slice-fail", 2);
    const ctx = context();
    const warnings: unknown[] = [];
    const log = pino(
      { level: "warn" },
      { write: (line: string) => warnings.push(JSON.parse(line)) },
    );
    // Redis refuses the first endpoint's follow-up jobs (as a Redis outage would), only that call.
    let calls = 0;
    const failing: WorkerContext = {
      ...ctx,
      log,
      enqueueMany: async (key, payloads) => {
        if (calls++ === 0) throw new Error("Redis is unreachable");
        return ctx.enqueueMany(key, payloads);
      },
    };
    await expect(processSweep(failing, { endpointIds: ids })).rejects.toThrow(
      `sweep failed for 1 of 2 endpoints (first: ${ids[0]}: Redis is unreachable)`,
    );
    // The second endpoint was reconciled all the same.
    expect(await replicasOf(ids[1]!)).toBe(1);
    expect(warnings).toContainEqual(
      expect.objectContaining({ endpointId: ids[0], msg: "sweep of an endpoint failed" }),
    );
  });
});
