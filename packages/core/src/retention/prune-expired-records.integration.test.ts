import { randomUUID } from "node:crypto";
import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pruneExpiredRecords } from "./prune-expired-records.ts";

// Retention (issue 23, finding 8): scale events, replicas and Idempotency-Keys only grew.
// Aged rows go in batches; young ones, live replicas and starts history has not taken into
// account yet stay.

const DAY = 86_400_000;

describe("pruning expired records", () => {
  let t: TestDatabase;
  let orgId: string;
  let endpointId: string;
  let deploymentId: string;
  const now = new Date("2026-11-24T12:00:00Z");
  const ago = (ms: number) => new Date(now.getTime() - ms);

  beforeAll(async () => {
    t = await createTestDatabase();
    ({ orgId } = await seedDemo(t.db));
    const endpoint = await t.db.endpoint.findFirstOrThrow({ where: { orgId } });
    endpointId = endpoint.id;
    deploymentId = endpoint.activeDeploymentId!;
  });
  afterAll(async () => {
    await t.drop();
  });

  /** A replica in `state`, last changed `age` ago, with one cold start (handled or not). */
  async function replica(state: "stopped" | "failed" | "ready", age: number, handled = true) {
    const r = await t.db.replica.create({
      data: { orgId, endpointId, deploymentId, state },
    });
    await t.db.coldStart.create({
      data: {
        orgId,
        endpointId,
        deploymentId,
        replicaId: r.id,
        path: "pull",
        locality: "cold",
        predictedSeconds: 60,
        status: "succeeded",
        closedHandledAt: handled ? ago(age) : null,
      },
    });
    // updatedAt is set by Prisma on write: age it directly.
    await t.db.$executeRaw`UPDATE "Replica" SET "updatedAt" = ${ago(age)} WHERE id = ${r.id}::uuid`;
    return r.id;
  }

  it("deletes what the policy no longer keeps, and only that", async () => {
    await t.db.scaleEvent.deleteMany({});
    await t.db.replica.deleteMany({});
    const events = [ago(91 * DAY), ago(91 * DAY), ago(89 * DAY)];
    for (const createdAt of events)
      await t.db.scaleEvent.create({
        data: {
          orgId,
          endpointId,
          previousDesired: 0,
          desired: 1,
          source: "api",
          actorType: "system",
          createdAt,
        },
      });
    for (const [key, createdAt] of [
      ["old", ago(25 * 3_600_000)],
      ["young", ago(23 * 3_600_000)],
    ] as const)
      await t.db.idempotencyRecord.create({
        data: { orgId, key, requestHash: "h", status: 200, response: {}, createdAt },
      });
    const oldStopped = await replica("stopped", 91 * DAY);
    const oldFailed = await replica("failed", 100 * DAY);
    const youngStopped = await replica("stopped", 10 * DAY);
    const oldReady = await replica("ready", 200 * DAY);
    const unhandled = await replica("stopped", 200 * DAY, false);
    // The cost ledger: an interval that ended before the retention goes, a recent one stays.
    for (const endedAt of [ago(95 * DAY), ago(5 * DAY)])
      await t.db.gpuTime.create({
        data: {
          orgId,
          endpointId,
          deploymentId,
          replicaId: oldReady,
          category: "serving",
          gpus: 1,
          startedAt: new Date(endedAt.getTime() - 3_600_000),
          endedAt,
        },
      });
    // Webhook deliveries: an old settled one goes (with its attempts); an old pending one and a
    // young one stay.
    const subscription = await t.db.webhookSubscription.create({
      data: {
        id: randomUUID(),
        orgId,
        url: "https://hooks.example.com/thaw",
        eventTypes: ["endpoint.scaled"],
        sealedSecret: "sealed",
      },
    });
    const delivery = (messageId: string, status: "succeeded" | "failed" | "pending", age: number) =>
      t.db.webhookDelivery.create({
        data: {
          orgId,
          subscriptionId: subscription.id,
          messageId,
          eventType: "endpoint.scaled",
          payload: {},
          status,
          createdAt: ago(age),
        },
      });
    const oldSettled = await delivery("msg_old_settled", "succeeded", 120 * DAY);
    await t.db.webhookAttempt.create({
      data: { deliveryId: oldSettled.id, attempt: 1, statusCode: 200, durationMs: 12 },
    });
    await delivery("msg_old_failed", "failed", 91 * DAY);
    await delivery("msg_old_pending", "pending", 120 * DAY);
    await delivery("msg_young", "succeeded", 1 * DAY);
    // Load samples (the what-if's input): a minute before the retention goes, a recent one stays.
    for (const minute of [ago(91 * DAY), ago(2 * DAY)])
      await t.db.loadSample.create({
        data: { orgId, endpointId, minute, maxConcurrency: 3, sumConcurrency: 4, signals: 2 },
      });

    const pruned = await pruneExpiredRecords({
      db: t.db,
      policy: { retentionDays: 90, idempotencyKeyHours: 24 },
      now,
    });
    expect(pruned).toEqual({
      idempotencyRecords: 1,
      scaleEvents: 2,
      replicas: 2,
      gpuTime: 1,
      webhookDeliveries: 2,
      loadSamples: 1,
    });
    expect((await t.db.loadSample.findMany()).map((r) => r.minute)).toEqual([ago(2 * DAY)]);
    expect((await t.db.gpuTime.findMany()).map((r) => r.endedAt)).toEqual([ago(5 * DAY)]);
    expect((await t.db.webhookDelivery.findMany()).map((d) => d.messageId).sort()).toEqual([
      "msg_old_pending",
      "msg_young",
    ]);
    expect(await t.db.webhookAttempt.count()).toBe(0);
    expect(await t.db.scaleEvent.count()).toBe(1);
    expect((await t.db.idempotencyRecord.findMany()).map((r) => r.key)).toEqual(["young"]);
    const left = new Set((await t.db.replica.findMany()).map((r) => r.id));
    expect(left).toEqual(new Set([youngStopped, oldReady, unhandled]));
    expect(left.has(oldStopped) || left.has(oldFailed)).toBe(false);
    // Their starts went with them; the others' stayed.
    expect(await t.db.coldStart.count()).toBe(3);
    // A second run finds nothing more.
    expect(
      await pruneExpiredRecords({
        db: t.db,
        policy: { retentionDays: 90, idempotencyKeyHours: 24 },
        now,
      }),
    ).toEqual({
      idempotencyRecords: 0,
      scaleEvents: 0,
      replicas: 0,
      gpuTime: 0,
      webhookDeliveries: 0,
      loadSamples: 0,
    });
  });

  it("works a backlog off in batches", async () => {
    await t.db.scaleEvent.deleteMany({});
    await t.db.$executeRaw`
      INSERT INTO "ScaleEvent" (id, "orgId", "endpointId", "previousDesired", desired, source, "actorType", "createdAt")
      SELECT gen_random_uuid(), ${orgId}::uuid, ${endpointId}::uuid, 0, 1, 'api', 'system', ${ago(120 * DAY)}
      FROM generate_series(1, 2500)`;
    const pruned = await pruneExpiredRecords({
      db: t.db,
      policy: { retentionDays: 90, idempotencyKeyHours: 24 },
      now,
    });
    expect(pruned.scaleEvents).toBe(2500);
    expect(await t.db.scaleEvent.count()).toBe(0);
  });
});
