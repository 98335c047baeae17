import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/index.ts";
import { createDeployment } from "../deployments/index.ts";
import { TEST_DEPLOYMENT } from "../testing/index.ts";
import {
  applyLoadSignal,
  createEndpoint,
  deleteEndpoint,
  setDesiredReplicas,
  updateEndpoint,
} from "./index.ts";

// What follows each change of an endpoint, as its use case says (the transports only hand it
// to their producer): every change of what the endpoint wants is reconciled now, and a load
// signal that leaves the desired count where it was asks for nothing.

describe("the work that follows a change of an endpoint", () => {
  let t: TestDatabase;
  let member: Actor;

  beforeAll(async () => {
    t = await createTestDatabase();
    const { orgId, userId } = await seedDemo(t.db);
    member = { type: "user", userId, orgId, role: "member" };
  });
  afterAll(async () => {
    await t.drop();
  });

  it("reconciles the endpoint after a create, a change, a roll, a scale and a delete", async () => {
    const created = await createEndpoint({
      actor: member,
      input: {
        slug: "follows",
        name: "Follows",
        gpuType: "L40S",
        maxReplicas: 4,
        deployment: TEST_DEPLOYMENT,
      },
      source: "api",
      db: t.db,
    });
    const id = created.result.id;
    const reconcile = [{ queue: "reconcile", payload: { endpointId: id } }];
    expect(created.followUps).toEqual(reconcile);
    const changes = { objective: "p90" };
    const updated = await updateEndpoint({
      actor: member,
      endpoint: "follows",
      input: changes,
      source: "api",
      db: t.db,
    });
    expect(updated.followUps).toEqual(reconcile);
    const rolled = await createDeployment({
      actor: member,
      endpoint: "follows",
      input: TEST_DEPLOYMENT,
      db: t.db,
    });
    expect(rolled.followUps).toEqual(reconcile);
    const scaled = await setDesiredReplicas({
      actor: member,
      endpoint: "follows",
      input: { replicas: 2 },
      idempotencyKey: "follows-1",
      source: "api",
      db: t.db,
    });
    expect(scaled.followUps).toEqual(reconcile);
    // A replayed answer is reconciled again too: reconcile is level-triggered.
    const replayed = await setDesiredReplicas({
      actor: member,
      endpoint: "follows",
      input: { replicas: 2 },
      idempotencyKey: "follows-1",
      source: "api",
      db: t.db,
    });
    expect(replayed).toEqual(scaled);
    const deleted = await deleteEndpoint({
      actor: member,
      endpoint: "follows",
      source: "api",
      db: t.db,
    });
    expect(deleted.followUps).toEqual(reconcile);
  });

  it("reconciles after a load signal only when it moved the desired count", async () => {
    const { result: endpoint } = await createEndpoint({
      actor: member,
      input: {
        slug: "signalled",
        name: "Signalled",
        gpuType: "L40S",
        maxReplicas: 4,
        deployment: TEST_DEPLOYMENT,
      },
      source: "api",
      db: t.db,
    });
    const now = new Date();
    const idle = await applyLoadSignal({
      actor: member,
      endpoint: "signalled",
      input: { inFlightRequests: 0 },
      db: t.db,
      now,
    });
    expect(idle.result).toMatchObject({ previousReplicas: 0, desiredReplicas: 0 });
    expect(idle.followUps).toEqual([]);
    const busy = await applyLoadSignal({
      actor: member,
      endpoint: "signalled",
      input: { inFlightRequests: 50 },
      db: t.db,
      now: new Date(now.getTime() + 1_000),
    });
    expect(busy.result.desiredReplicas).toBeGreaterThan(0);
    expect(busy.followUps).toEqual([{ queue: "reconcile", payload: { endpointId: endpoint.id } }]);
  });
});
