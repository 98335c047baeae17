import { randomBytes } from "node:crypto";
import { useTestDatabase } from "@thaw/db/testing";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/index.ts";
import { createEndpoint } from "../endpoints/create-endpoint.ts";
import { deleteEndpoint } from "../endpoints/delete-endpoint.ts";
import { updateEndpoint } from "../endpoints/update-endpoint.ts";
import { setDesiredReplicas } from "../endpoints/set-desired-replicas.ts";
import type { AppError } from "../errors/index.ts";
import { TEST_DEPLOYMENT } from "../testing/index.ts";
import { createWebhookSubscription } from "./create-webhook-subscription.ts";
import { deleteWebhookSubscription } from "./delete-webhook-subscription.ts";
import { deliverWebhook } from "./deliver-webhook.ts";
import { findStalledWebhookDeliveries } from "./find-stalled-webhook-deliveries.ts";
import { listWebhookDeliveries } from "./list-webhook-deliveries.ts";
import { listWebhookSubscriptions } from "./list-webhook-subscriptions.ts";
import { recordCapacityFallback } from "./record-capacity-fallback.ts";
import { recordColdStartWebhookEvents } from "./record-cold-start-webhook-events.ts";
import { redeliverWebhook } from "./redeliver-webhook.ts";
import { rotateWebhookSecret } from "./rotate-webhook-secret.ts";
import { startTestReceiver, type TestReceiver } from "./testing-receiver.ts";
import { updateWebhookSubscription } from "./update-webhook-subscription.ts";
import type { WebhookConfig } from "./webhook-url-policy.ts";

// Webhooks end to end in core: subscriptions with a secret shown once and sealed at rest,
// URLs refused by text and at send time, events written as outbox rows with the change, and
// deliveries POSTed to a real receiver on 127.0.0.1, verified with standardwebhooks.

const sealingKey = randomBytes(32);
const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("should have been refused");
    },
    (e: unknown) => e as AppError,
  );

describe("webhooks", () => {
  const database = useTestDatabase();
  let admin: Actor;
  let member: Actor;
  let otherOrg: Actor;
  let receiver: TestReceiver;
  let config: WebhookConfig;
  let endpointId: string;
  let scale = 1;

  beforeAll(async () => {
    const db = database.current.db;
    const [a, b] = await Promise.all([
      db.org.create({ data: { slug: "hooks-a", name: "A" } }),
      db.org.create({ data: { slug: "hooks-b", name: "B" } }),
    ]);
    const user = await db.user.create({
      data: { id: crypto.randomUUID(), email: "admin@hooks.test", name: "Admin" },
    });
    admin = { type: "user", userId: user.id, orgId: a.id, role: "admin" };
    member = { type: "user", userId: user.id, orgId: a.id, role: "member" };
    otherOrg = { type: "user", userId: user.id, orgId: b.id, role: "owner" };
    receiver = await startTestReceiver();
    config = { sealingKey, trustedHosts: new Set([receiver.host]) };
    const { result } = await createEndpoint({
      actor: admin,
      input: {
        slug: "hooked",
        name: "Hooked",
        gpuType: "L40S",
        maxReplicas: 8,
        deployment: TEST_DEPLOYMENT,
      },
      source: "api",
      db,
    });
    endpointId = result.id;
  }, 60_000);

  afterAll(async () => {
    await receiver.close();
  });

  /** Scales the endpoint (an endpoint.scaled event) and answers the delivery ids it queued. */
  async function scaleOnce(): Promise<string[]> {
    scale = scale === 1 ? 2 : 1;
    const { followUps } = await setDesiredReplicas({
      actor: admin,
      endpoint: "hooked",
      input: { replicas: scale },
      source: "api",
      db: database.current.db,
    });
    return followUps.flatMap((f) =>
      "queue" in f && f.queue === "webhookDelivery" ? [f.payload.deliveryId] : [],
    );
  }

  async function subscribe(eventTypes: string[] = ["endpoint.scaled"]) {
    return createWebhookSubscription({
      actor: admin,
      input: { url: receiver.url, description: "test receiver", eventTypes },
      db: database.current.db,
      config,
    });
  }

  it("answers the secret once; no read, row or audit entry shows it", async () => {
    const db = database.current.db;
    const created = await subscribe();
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const listed = await listWebhookSubscriptions({ actor: admin, db });
    expect(listed.webhooks.map((w) => w.id)).toContain(created.id);
    expect(JSON.stringify(listed)).not.toContain(created.secret.slice(6));
    const row = await db.webhookSubscription.findUniqueOrThrow({ where: { id: created.id } });
    expect(row.sealedSecret).not.toContain(created.secret.slice(6));
    const audit = await db.auditLog.findMany({ where: { targetId: created.id } });
    expect(JSON.stringify(audit)).not.toContain(created.secret.slice(6));
    // Another org sees nothing of it; a member may not manage webhooks.
    expect((await listWebhookSubscriptions({ actor: otherOrg, db })).webhooks).toEqual([]);
    expect((await refusal(listWebhookSubscriptions({ actor: member, db }))).code).toBe("FORBIDDEN");
    expect(
      (await refusal(deleteWebhookSubscription({ actor: otherOrg, id: created.id, db }))).code,
    ).toBe("NOT_FOUND");
    await deleteWebhookSubscription({ actor: admin, id: created.id, db });
  });

  it.each([
    ["loopback", "http://127.0.0.1:9/hook"],
    ["private", "https://10.0.0.5/hook"],
    ["metadata", "https://169.254.169.254/latest/meta-data"],
    ["internal name", "https://hooks.internal/x"],
    ["plain http to a public host", "http://hooks.example.com/x"],
  ])("refuses a %s URL with a 422 naming url", async (_what, url) => {
    const error = await refusal(
      createWebhookSubscription({
        actor: admin,
        input: { url, eventTypes: ["cold_start.failed"] },
        db: database.current.db,
        config: { sealingKey, trustedHosts: new Set() },
        where: "body",
      }),
    );
    expect(error.code).toBe("UNPROCESSABLE");
    expect(error.details?.field).toBe("body.url");
  });

  it("refuses malformed input with a 400 naming the field", async () => {
    const error = await refusal(
      createWebhookSubscription({
        actor: admin,
        input: { url: "not a url", eventTypes: ["cold_start.nope"] },
        db: database.current.db,
        config,
        where: "body",
      }),
    );
    expect(error.code).toBe("BAD_REQUEST");
    expect(String(error.details?.field)).toMatch(/^body\.(url|eventTypes)/);
  });

  it("delivers an endpoint.scaled event, signed so that standardwebhooks verifies it", async () => {
    const db = database.current.db;
    const sub = await subscribe();
    const [deliveryId, ...more] = await scaleOnce();
    expect(more).toEqual([]);
    const before = receiver.received.length;
    const result = await deliverWebhook({ db, deliveryId: deliveryId!, config, retryInMs: 1_000 });
    expect(result.outcome).toBe("succeeded");
    const got = receiver.received[before]!;
    expect(got.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const verified = new Webhook(sub.secret).verify(got.body, got.headers) as {
      type: string;
      data: { endpointId: string; desiredReplicas: number };
    };
    expect(verified.type).toBe("endpoint.scaled");
    expect(verified.data).toMatchObject({ endpointId, desiredReplicas: scale });
    // A wrong secret does not verify.
    expect(() =>
      new Webhook(`whsec_${randomBytes(32).toString("base64")}`).verify(got.body, got.headers),
    ).toThrow();
    const { deliveries } = await listWebhookDeliveries({ actor: admin, id: sub.id, query: {}, db });
    expect(deliveries[0]).toMatchObject({
      id: deliveryId,
      status: "succeeded",
      attempts: 1,
      lastStatusCode: 200,
      attemptLog: [{ attempt: 1, statusCode: 200, errorClass: null, responseBody: "ok" }],
    });
    // A second delivery attempt of a delivered message does nothing.
    expect(
      (await deliverWebhook({ db, deliveryId: deliveryId!, config, retryInMs: 0 })).outcome,
    ).toBe("skipped");
    await deleteWebhookSubscription({ actor: admin, id: sub.id, db });
  });

  it("retries after a 500, then succeeds; a 400 is final; each attempt is logged", async () => {
    const db = database.current.db;
    const sub = await subscribe();
    const [deliveryId] = await scaleOnce();
    receiver.script.push({ status: 500, body: "x".repeat(5_000) }, { status: 200 });
    const first = await deliverWebhook({ db, deliveryId: deliveryId!, config, retryInMs: 30_000 });
    expect(first).toMatchObject({ outcome: "retry", attempt: 1, statusCode: 500 });
    const pending = await db.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId! } });
    expect(pending.status).toBe("pending");
    expect(pending.nextAttemptAt!.getTime()).toBeGreaterThan(Date.now() + 20_000);
    const second = await deliverWebhook({ db, deliveryId: deliveryId!, config, retryInMs: 60_000 });
    expect(second).toMatchObject({ outcome: "succeeded", attempt: 2, statusCode: 200 });
    const { deliveries } = await listWebhookDeliveries({ actor: admin, id: sub.id, query: {}, db });
    const log = deliveries[0]!.attemptLog;
    expect(log.map((a) => [a.attempt, a.statusCode, a.errorClass])).toEqual([
      [2, 200, null],
      [1, 500, "http_5xx"],
    ]);
    // The receiver's answer is kept to 1 KiB.
    expect(log[1]!.responseBody.length).toBe(1024);

    const [finalId] = await scaleOnce();
    receiver.script.push({ status: 400, body: "bad" });
    const final = await deliverWebhook({ db, deliveryId: finalId!, config, retryInMs: 30_000 });
    expect(final.outcome).toBe("failed");
    // The last attempt's retryable failure is final too.
    const [lastId] = await scaleOnce();
    receiver.script.push({ status: 503 });
    expect(
      (await deliverWebhook({ db, deliveryId: lastId!, config, retryInMs: null })).outcome,
    ).toBe("failed");

    // Redelivery sends the failed one again, same webhook-id, attempts numbered on.
    const { result, followUps } = await redeliverWebhook({ actor: admin, deliveryId: finalId, db });
    expect(result.status).toBe("pending");
    expect(followUps).toEqual([{ queue: "webhookDelivery", payload: { deliveryId: finalId } }]);
    expect((await refusal(redeliverWebhook({ actor: admin, deliveryId: finalId, db }))).code).toBe(
      "CONFLICT",
    );
    expect(
      (await refusal(redeliverWebhook({ actor: otherOrg, deliveryId: finalId, db }))).code,
    ).toBe("NOT_FOUND");
    const again = await deliverWebhook({ db, deliveryId: finalId!, config, retryInMs: 1 });
    expect(again).toMatchObject({ outcome: "succeeded", attempt: 2 });
    const row = await db.webhookDelivery.findUniqueOrThrow({ where: { id: finalId! } });
    const sent = receiver.received.filter((r) => r.headers["webhook-id"] === row.messageId);
    expect(sent).toHaveLength(2);
    await deleteWebhookSubscription({ actor: admin, id: sub.id, db });
  });

  it("finds pending deliveries whose job was lost, for the sweep to enqueue again", async () => {
    const db = database.current.db;
    const sub = await subscribe();
    const [fresh] = await scaleOnce();
    expect(await findStalledWebhookDeliveries({ db })).not.toContain(fresh);
    const later = new Date(Date.now() + 3 * 60_000);
    expect(await findStalledWebhookDeliveries({ db, now: later })).toContain(fresh);
    // One backing off until later is not stalled; nor is one delivered.
    receiver.script.push({ status: 500 });
    await deliverWebhook({ db, deliveryId: fresh!, config, retryInMs: 10 * 60_000 });
    expect(await findStalledWebhookDeliveries({ db, now: later })).not.toContain(fresh);
    await deliverWebhook({ db, deliveryId: fresh!, config, retryInMs: 1_000 });
    expect(await findStalledWebhookDeliveries({ db, now: later })).not.toContain(fresh);
    await deleteWebhookSubscription({ actor: admin, id: sub.id, db });
  });

  it("fails a delivery at once when its secret does not open under the key", async () => {
    const db = database.current.db;
    const sub = await subscribe();
    const [deliveryId] = await scaleOnce();
    const result = await deliverWebhook({
      db,
      deliveryId: deliveryId!,
      config: { ...config, sealingKey: randomBytes(32) },
      retryInMs: 1_000,
    });
    expect(result.outcome).toBe("failed");
    const attempt = await db.webhookAttempt.findFirstOrThrow({
      where: { deliveryId: deliveryId! },
    });
    expect(attempt.errorClass).toBe("secret_unopenable");
    await deleteWebhookSubscription({ actor: admin, id: sub.id, db });
  });

  it("times out a receiver that does not answer, and retries", async () => {
    const db = database.current.db;
    const sub = await subscribe();
    const [deliveryId] = await scaleOnce();
    receiver.script.push({ status: 200, delayMs: 1_500 });
    const result = await deliverWebhook({
      db,
      deliveryId: deliveryId!,
      config,
      retryInMs: 1_000,
      timeoutMs: 300,
    });
    expect(result.outcome).toBe("retry");
    const attempt = await db.webhookAttempt.findFirstOrThrow({
      where: { deliveryId: deliveryId! },
    });
    expect(attempt.errorClass).toBe("timeout");
    await deleteWebhookSubscription({ actor: admin, id: sub.id, db });
  });

  it("refuses at send time a private address the operator no longer trusts", async () => {
    const db = database.current.db;
    const sub = await subscribe();
    const [deliveryId] = await scaleOnce();
    const before = receiver.received.length;
    const result = await deliverWebhook({
      db,
      deliveryId: deliveryId!,
      config: { sealingKey, trustedHosts: new Set() },
      retryInMs: 1_000,
    });
    expect(result.outcome).toBe("failed");
    expect(receiver.received.length).toBe(before);
    const attempt = await db.webhookAttempt.findFirstOrThrow({
      where: { deliveryId: deliveryId! },
    });
    expect(attempt.errorClass).toBe("non_public_address");
    await deleteWebhookSubscription({ actor: admin, id: sub.id, db });
  });

  it("signs with the new and the previous secret for 24 h after a rotation", async () => {
    const db = database.current.db;
    const sub = await subscribe();
    const rotated = await rotateWebhookSecret({ actor: admin, id: sub.id, db, config });
    expect(rotated.secret).not.toBe(sub.secret);
    expect(Date.parse(rotated.previousSecretExpiresAt!) - Date.now()).toBeGreaterThan(
      23 * 3600_000,
    );
    const [deliveryId] = await scaleOnce();
    const before = receiver.received.length;
    await deliverWebhook({ db, deliveryId: deliveryId!, config, retryInMs: 1_000 });
    const got = receiver.received[before]!;
    expect(got.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    for (const secret of [sub.secret, rotated.secret])
      expect(() => new Webhook(secret).verify(got.body, got.headers)).not.toThrow();

    // Past the 24 h only the new secret signs.
    const [laterId] = await scaleOnce();
    const later = receiver.received.length;
    await deliverWebhook({
      db,
      deliveryId: laterId!,
      config,
      retryInMs: 1_000,
      now: () => new Date(Date.now() + 25 * 3600_000),
    });
    const laterGot = receiver.received[later]!;
    expect(laterGot.headers["webhook-signature"]!.split(" ")).toHaveLength(1);
    await deleteWebhookSubscription({ actor: admin, id: sub.id, db });
  });

  it("records endpoint.scaled when new bounds move the desired count, and on delete", async () => {
    const db = database.current.db;
    const sub = await subscribe();
    await createEndpoint({
      actor: admin,
      input: {
        slug: "bounded",
        name: "Bounded",
        gpuType: "L40S",
        maxReplicas: 4,
        desiredReplicas: 3,
        deployment: TEST_DEPLOYMENT,
      },
      source: "api",
      db,
    });
    const updated = await updateEndpoint({
      actor: admin,
      endpoint: "bounded",
      input: { maxReplicas: 2 },
      source: "api",
      db,
    });
    const deleted = await deleteEndpoint({ actor: admin, endpoint: "bounded", source: "api", db });
    const queuedIds = [...updated.followUps, ...deleted.followUps].flatMap((f) =>
      "queue" in f && f.queue === "webhookDelivery" ? [f.payload.deliveryId] : [],
    );
    const rows = await db.webhookDelivery.findMany({
      where: { id: { in: queuedIds } },
      orderBy: { createdAt: "asc" },
    });
    expect(rows.map((r) => (r.payload as { data: { desiredReplicas: number } }).data)).toEqual([
      expect.objectContaining({ previousReplicas: 3, desiredReplicas: 2 }),
      expect.objectContaining({
        previousReplicas: 2,
        desiredReplicas: 0,
        reason: "endpoint deleted",
      }),
    ]);
    await deleteWebhookSubscription({ actor: admin, id: sub.id, db });
  });

  it("records capacity.fallback once per launched host", async () => {
    const db = database.current.db;
    const sub = await subscribe(["capacity.fallback"]);
    const a10g = { instanceType: "g5.xlarge", gpuModel: "A10G", gpusPerHost: 1 };
    const requested = { ...a10g, zone: "us-east-1a", priceUsdPerHour: 1.006 };
    const launched = { ...a10g, zone: "us-east-1b", priceUsdPerHour: 1.006 };
    const nodeId = crypto.randomUUID();
    const fallback = {
      db,
      orgId: admin.orgId,
      nodeId,
      requested,
      launched,
      unavailable: [{ offering: requested, reason: "InsufficientInstanceCapacity" }],
    };
    const [deliveryId, ...more] = await recordCapacityFallback(fallback);
    expect(more).toEqual([]);
    expect(await recordCapacityFallback(fallback)).toEqual([]);
    const before = receiver.received.length;
    await deliverWebhook({ db, deliveryId: deliveryId!, config, retryInMs: 1_000 });
    const event = new Webhook(sub.secret).verify(
      receiver.received[before]!.body,
      receiver.received[before]!.headers,
    );
    expect(event).toMatchObject({
      type: "capacity.fallback",
      data: {
        nodeId,
        requested: { zone: "us-east-1a" },
        launched: { zone: "us-east-1b" },
        unavailable: [{ zone: "us-east-1a", reason: "InsufficientInstanceCapacity" }],
      },
    });
    await deleteWebhookSubscription({ actor: admin, id: sub.id, db });
  });

  it("records cold_start.succeeded and .slow for a start slower than its p90, once", async () => {
    const db = database.current.db;
    const sub = await subscribe(["cold_start.succeeded", "cold_start.slow", "cold_start.failed"]);
    const endpoint = await db.endpoint.findUniqueOrThrow({ where: { id: endpointId } });
    const replica = await db.replica.create({
      data: {
        orgId: admin.orgId,
        endpointId,
        deploymentId: endpoint.activeDeploymentId!,
        state: "ready",
      },
    });
    const start = await db.coldStart.create({
      data: {
        orgId: admin.orgId,
        endpointId,
        deploymentId: endpoint.activeDeploymentId!,
        replicaId: replica.id,
        path: "pull",
        locality: "cold",
        predictedSeconds: 40,
        predictedP90Seconds: 60,
        actualSeconds: 95,
        status: "succeeded",
        readyAt: new Date(),
      },
    });
    await db.phaseEvent.createMany({
      data: [
        { coldStartId: start.id, sequence: 1, phase: "pull", startedAt: new Date(), seconds: 20 },
        {
          coldStartId: start.id,
          sequence: 2,
          phase: "load_weights",
          startedAt: new Date(),
          seconds: 70,
        },
      ],
    });
    const ids = await recordColdStartWebhookEvents({ db, coldStartId: start.id });
    expect(ids).toHaveLength(2);
    expect(await recordColdStartWebhookEvents({ db, coldStartId: start.id })).toEqual([]);
    const rows = await db.webhookDelivery.findMany({ where: { subscriptionId: sub.id } });
    expect(rows.map((r) => r.eventType).sort()).toEqual([
      "cold_start.slow",
      "cold_start.succeeded",
    ]);
    const slow = rows.find((r) => r.eventType === "cold_start.slow")!;
    expect(slow.payload).toMatchObject({
      type: "cold_start.slow",
      data: {
        coldStartId: start.id,
        actualSeconds: 95,
        predictedP90Seconds: 60,
        slowestPhase: { phase: "load_weights", seconds: 70 },
      },
    });
    // A disabled subscription gets nothing.
    await updateWebhookSubscription({
      actor: admin,
      id: sub.id,
      input: { enabled: false },
      db,
      config,
    });
    const failed = await db.coldStart.create({
      data: {
        orgId: admin.orgId,
        endpointId,
        deploymentId: endpoint.activeDeploymentId!,
        replicaId: replica.id,
        attempt: 2,
        path: "pull",
        locality: "cold",
        predictedSeconds: 40,
        status: "failed",
        error: "pull: manifest unknown",
      },
    });
    expect(await recordColdStartWebhookEvents({ db, coldStartId: failed.id })).toEqual([]);
    await deleteWebhookSubscription({ actor: admin, id: sub.id, db });
  });
});
