import { randomBytes } from "node:crypto";
import {
  createWebhookSubscription,
  jobOf,
  setDesiredReplicas,
  type Actor,
  type WebhookConfig,
} from "@thaw/core";
import { startTestReceiver, type TestReceiver } from "@thaw/core/testing";
import { useTestDatabase } from "@thaw/db/testing";
import { pino } from "pino";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueue, enqueueMany } from "../queues.ts";
import { startScheduler, type RunningScheduler } from "../scheduler.ts";
import {
  schedulerTestEnv,
  startSchedulerTestStack,
  type SchedulerTestStack,
} from "../testing/scheduler-test-stack.ts";

// Webhooks through the running scheduler: a real cold start on a sim agent closes, the history
// job records cold_start.succeeded, and the webhook-delivery worker POSTs it, signed, to a
// receiver on 127.0.0.1 that the operator trusts (THAW_WEBHOOK_TRUSTED_HOSTS); a receiver
// that answers 500 is retried by BullMQ until it answers 200, each attempt logged.

const silent = pino({ level: "silent" });
const sealingKey = randomBytes(32);

describe("webhook delivery worker", () => {
  const testDb = useTestDatabase();
  const prefix = `test-webhooks-${Date.now()}`;
  let stack: SchedulerTestStack;
  let scheduler: RunningScheduler;
  let receiver: TestReceiver;
  let owner: Actor;
  let secret: string;
  const db = () => testDb.current.db;

  beforeAll(async () => {
    receiver = await startTestReceiver();
    stack = await startSchedulerTestStack({
      db: db(),
      prefix,
      hosts: 1,
      agentPrefix: "wh",
      agentEnv: { THAW_SIM_TIME_FACTOR: "2000", THAW_SIM_ESTARGZ: "false" },
    });
    const membership = await db().membership.findFirstOrThrow({
      where: { orgId: stack.orgId, role: "owner" },
    });
    owner = { type: "user", userId: membership.userId, orgId: stack.orgId, role: "owner" };
    const config: WebhookConfig = { sealingKey, trustedHosts: new Set([receiver.host]) };
    secret = (
      await createWebhookSubscription({
        actor: owner,
        input: {
          url: receiver.url,
          eventTypes: ["cold_start.succeeded", "cold_start.failed", "endpoint.scaled"],
        },
        db: db(),
        config,
      })
    ).secret;
    scheduler = await startScheduler(
      schedulerTestEnv({
        databaseUrl: testDb.current.url,
        prefix,
        extra: {
          THAW_CREDENTIALS_KEY: sealingKey.toString("base64"),
          THAW_WEBHOOK_TRUSTED_HOSTS: receiver.host,
        },
      }),
      silent,
      { sweepMs: 1_000 },
    );
  }, 120_000);

  afterAll(async () => {
    await scheduler?.stop();
    await stack?.close();
    await receiver?.close();
  });

  const verified = () =>
    receiver.received.map(
      (r) =>
        new Webhook(secret).verify(r.body, r.headers) as {
          type: string;
          data: Record<string, unknown>;
        },
    );

  it("delivers endpoint.scaled, then the cold start's cold_start.succeeded, signed", async () => {
    const { followUps } = await setDesiredReplicas({
      actor: owner,
      endpoint: stack.endpointId,
      input: { replicas: 1 },
      source: "api",
      db: db(),
    });
    // What the web app's followThrough does with the use case's answer.
    for (const work of followUps)
      if ("queue" in work) await enqueue(stack.queues, work.queue, work.payload as never);

    await expect
      .poll(() => verified().map((e) => e.type), { timeout: 60_000, interval: 250 })
      .toEqual(["endpoint.scaled", "cold_start.succeeded"]);
    const [scaled, started] = verified();
    expect(scaled!.data).toMatchObject({ endpointId: stack.endpointId, desiredReplicas: 1 });
    const start = await db().coldStart.findFirstOrThrow({
      where: { endpointId: stack.endpointId, status: "succeeded" },
    });
    expect(started!.data).toMatchObject({
      coldStartId: start.id,
      status: "succeeded",
      actualSeconds: start.actualSeconds,
    });
    // The worker records a delivery after the receiver has answered it: the receipt above can
    // be seen before the record is written.
    await expect
      .poll(async () => (await db().webhookDelivery.findMany()).map((d) => d.status).sort(), {
        timeout: 10_000,
        interval: 100,
      })
      .toEqual(["succeeded", "succeeded"]);
    const deliveries = await db().webhookDelivery.findMany({ include: { attemptLog: true } });
    expect(deliveries.flatMap((d) => d.attemptLog.map((a) => a.statusCode))).toEqual([200, 200]);
  }, 90_000);

  it("retries a delivery the receiver answered 500 until it answers 200", async () => {
    const delivery = await db().webhookDelivery.findFirstOrThrow({
      where: { eventType: "endpoint.scaled" },
    });
    await db().webhookDelivery.update({
      where: { id: delivery.id },
      data: { status: "pending" },
    });
    receiver.script.push({ status: 500 }, { status: 503 }, { status: 200 });
    const before = receiver.received.length;
    // The contract's backoff (30 s doubling) shortened for the test; the worker is the real one.
    const job = jobOf("webhookDelivery", { deliveryId: delivery.id });
    await stack.queues.webhookDelivery.add(job.name, job.data, {
      ...job.opts,
      backoff: { type: "fixed", delay: 200 },
    });
    await expect
      .poll(
        async () =>
          (await db().webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).status,
        { timeout: 20_000, interval: 200 },
      )
      .toBe("succeeded");
    expect(receiver.received.length - before).toBe(3);
    const attempts = await db().webhookAttempt.findMany({
      where: { deliveryId: delivery.id },
      orderBy: { attempt: "asc" },
    });
    expect(attempts.map((a) => [a.attempt, a.statusCode, a.errorClass])).toEqual([
      [1, 200, null],
      [2, 500, "http_5xx"],
      [3, 503, "http_5xx"],
      [4, 200, null],
    ]);
    // Every attempt carries the same webhook-id, and each signature verifies.
    const ids = new Set(receiver.received.slice(before).map((r) => r.headers["webhook-id"]));
    expect(ids).toEqual(new Set([delivery.messageId]));
    expect(verified()).toHaveLength(receiver.received.length);
  }, 30_000);

  it("refuses at send time an untrusted private address, without retrying", async () => {
    const sub = await db().webhookSubscription.findFirstOrThrow();
    await db().webhookSubscription.update({
      where: { id: sub.id },
      data: { url: "http://10.0.0.5:8080/hook" },
    });
    const delivery = await db().webhookDelivery.findFirstOrThrow({
      where: { eventType: "cold_start.succeeded" },
    });
    await db().webhookDelivery.update({ where: { id: delivery.id }, data: { status: "pending" } });
    await enqueueMany(stack.queues, "webhookDelivery", [{ deliveryId: delivery.id }]);
    await expect
      .poll(
        async () =>
          (await db().webhookDelivery.findUniqueOrThrow({ where: { id: delivery.id } })).status,
        { timeout: 10_000, interval: 200 },
      )
      .toBe("failed");
    const last = await db().webhookAttempt.findFirstOrThrow({
      where: { deliveryId: delivery.id },
      orderBy: { attempt: "desc" },
    });
    expect(last.errorClass).toBe("non_public_address");
  });
});
