import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/index.ts";
import { TEST_DEPLOYMENT } from "../testing/index.ts";
import { createEndpoint } from "./create-endpoint.ts";
import { setDesiredReplicas } from "./set-desired-replicas.ts";

// The scale request's writes, as the data says them: the desired count and version, one
// ScaleEvent, one audit entry and the outbox's deliveries in one transaction; nothing at
// all when it is refused; one answer per Idempotency-Key, also for two requests at once.

describe("setDesiredReplicas", () => {
  let t: TestDatabase;
  let member: Actor;
  let otherOrg: Actor;
  let endpointId: string;

  beforeAll(async () => {
    t = await createTestDatabase();
    const { orgId, userId } = await seedDemo(t.db);
    member = { type: "user", userId, orgId, role: "member" };
    const other = await t.db.org.create({ data: { slug: "other", name: "Other" } });
    otherOrg = { type: "user", userId, orgId: other.id, role: "owner" };
    const { result } = await createEndpoint({
      actor: member,
      input: {
        slug: "scaled",
        name: "Scaled",
        gpuType: "L40S",
        maxReplicas: 8,
        deployment: TEST_DEPLOYMENT,
      },
      source: "api",
      db: t.db,
    });
    endpointId = result.id;
    await t.db.webhookSubscription.create({
      data: {
        id: crypto.randomUUID(),
        orgId,
        url: "https://hooks.example.com/thaw",
        // Never opened here: nothing is delivered, only written to the outbox.
        sealedSecret: "sealed",
        eventTypes: ["endpoint.scaled"],
      },
    });
  });
  afterAll(async () => {
    await t.drop();
  });

  const scale = (replicas: number, extra: Partial<Parameters<typeof setDesiredReplicas>[0]> = {}) =>
    setDesiredReplicas({
      actor: member,
      endpoint: "scaled",
      input: { replicas },
      source: "api",
      db: t.db,
      ...extra,
    });
  const counts = async () => ({
    events: await t.db.scaleEvent.count({ where: { endpointId } }),
    audits: await t.db.auditLog.count({
      where: { targetId: endpointId, action: "endpoint.scaled" },
    }),
    deliveries: await t.db.webhookDelivery.count({ where: { eventType: "endpoint.scaled" } }),
  });

  it("writes the count, its event, its audit entry and its deliveries together", async () => {
    const before = await t.db.endpoint.findUniqueOrThrow({ where: { id: endpointId } });
    const { result, followUps } = await scale(3, {
      endpoint: endpointId.toUpperCase(),
      traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    });
    expect(result).toEqual({
      endpointId,
      slug: "scaled",
      previousReplicas: before.desiredReplicas,
      desiredReplicas: 3,
    });
    const after = await t.db.endpoint.findUniqueOrThrow({ where: { id: endpointId } });
    expect(after.desiredReplicas).toBe(3);
    expect(after.version).toBe(before.version + 1);
    expect(after.updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime());
    const event = await t.db.scaleEvent.findFirstOrThrow({
      where: { endpointId },
      orderBy: { createdAt: "desc" },
    });
    expect(event).toMatchObject({
      orgId: member.orgId,
      source: "api",
      previousDesired: before.desiredReplicas,
      desired: 3,
      actorType: "user",
      actorId: (member as { userId: string }).userId,
      traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    });
    const audit = await t.db.auditLog.findFirstOrThrow({
      where: { targetId: endpointId, action: "endpoint.scaled" },
      orderBy: { createdAt: "desc" },
    });
    expect(audit).toMatchObject({ orgId: member.orgId, targetType: "endpoint" });
    expect(audit.metadata).toEqual({ from: before.desiredReplicas, to: 3 });
    const delivery = await t.db.webhookDelivery.findFirstOrThrow({
      where: { eventType: "endpoint.scaled" },
      orderBy: { createdAt: "desc" },
    });
    expect(delivery.status).toBe("pending");
    expect(delivery.payload).toMatchObject({
      type: "endpoint.scaled",
      timestamp: event.createdAt.toISOString(),
      data: { scaleEventId: event.id, endpointSlug: "scaled", desiredReplicas: 3 },
    });
    expect(followUps).toEqual([
      { queue: "reconcile", payload: { endpointId } },
      { queue: "webhookDelivery", payload: { deliveryId: delivery.id } },
    ]);
  });

  it("writes nothing for a count it already has, or one outside the bounds", async () => {
    await scale(2);
    const before = await counts();
    const same = await scale(2);
    expect(same.result).toMatchObject({ previousReplicas: 2, desiredReplicas: 2 });
    expect(same.followUps).toEqual([{ queue: "reconcile", payload: { endpointId } }]);
    await expect(scale(9)).rejects.toMatchObject({
      code: "UNPROCESSABLE",
      details: { field: "body.replicas", minReplicas: 0, maxReplicas: 8 },
    });
    expect(await counts()).toEqual(before);
    const row = await t.db.endpoint.findUniqueOrThrow({ where: { id: endpointId } });
    expect(row.desiredReplicas).toBe(2);
  });

  it("finds no endpoint of another org, a deleted one, or a malformed name", async () => {
    await expect(scale(1, { actor: otherOrg })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(scale(1, { endpoint: "no such/endpoint" })).rejects.toMatchObject({
      code: "NOT_FOUND",
      details: { field: "endpoint" },
    });
    await expect(scale(1, { endpoint: crypto.randomUUID() })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });

  it("answers a key's first answer again, and refuses the key for another request", async () => {
    const first = await scale(4, { idempotencyKey: "replay-1" });
    await scale(5);
    const again = await scale(4, { idempotencyKey: "replay-1" });
    expect(again.result).toEqual(first.result);
    const row = await t.db.endpoint.findUniqueOrThrow({ where: { id: endpointId } });
    expect(row.desiredReplicas).toBe(5);
    await expect(scale(6, { idempotencyKey: "replay-1" })).rejects.toMatchObject({
      code: "CONFLICT",
      details: { field: "Idempotency-Key" },
    });
    await expect(scale(6, { idempotencyKey: "bad key" })).rejects.toMatchObject({
      code: "BAD_REQUEST",
      details: { field: "Idempotency-Key" },
    });
  });

  it("gives two requests with one new key at once one answer and one change", async () => {
    await scale(0);
    const before = await counts();
    // The endpoint's lock is held elsewhere until every request has looked its key up (and
    // missed) and waits for the lock: each then races to write the key.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockHeld = new Promise<void>((resolve) => (locked = resolve));
    const holder = t.db.$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT id FROM "Endpoint" WHERE id = ${endpointId}::uuid FOR UPDATE`;
        locked();
        await released;
      },
      { timeout: 30_000 },
    );
    await lockHeld;
    const requests = 3; // the test database's pool is 5: the holder, these and the poll below
    const pending = Array.from({ length: requests }, () =>
      scale(7, { idempotencyKey: "together-1" }),
    );
    for (;;) {
      const [row] = await t.db.$queryRaw<{ waiting: number }[]>`
        SELECT count(*)::int AS waiting FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'`;
      if (row?.waiting === requests) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    release();
    await holder;
    const answers = await Promise.all(pending);
    for (const answer of answers) expect(answer.result).toEqual(answers[0]!.result);
    expect(answers[0]!.result).toMatchObject({ previousReplicas: 0, desiredReplicas: 7 });
    const after = await counts();
    expect(after.events - before.events).toBe(1);
    expect(after.audits - before.audits).toBe(1);
    expect(after.deliveries - before.deliveries).toBe(1);
  });

  it("serialises concurrent scales of one endpoint: every change is one version", async () => {
    const before = await t.db.endpoint.findUniqueOrThrow({ where: { id: endpointId } });
    const targets = [1, 2, 3, 4, 5, 6];
    const answers = await Promise.all(targets.map((n) => scale(n)));
    const after = await t.db.endpoint.findUniqueOrThrow({ where: { id: endpointId } });
    // Each answer's previous count is another's new one (or the start): a chain, no lost update.
    const previous = answers.map((a) => a.result.previousReplicas).sort();
    expect(previous).toEqual(
      [before.desiredReplicas, ...targets].filter((n) => n !== after.desiredReplicas).sort(),
    );
    expect(after.version).toBe(before.version + targets.length);
  });
});
