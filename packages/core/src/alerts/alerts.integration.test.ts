import { randomBytes } from "node:crypto";
import { useTestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/index.ts";
import { createEndpoint } from "../endpoints/create-endpoint.ts";
import type { AppError } from "../errors/index.ts";
import { TEST_DEPLOYMENT, testNodeRow } from "../testing/index.ts";
import { createWebhookSubscription } from "../webhooks/create-webhook-subscription.ts";
import { deliverWebhook } from "../webhooks/deliver-webhook.ts";
import { startTestReceiver, type TestReceiver } from "../webhooks/testing-receiver.ts";
import type { WebhookConfig } from "../webhooks/webhook-url-policy.ts";
import { createAlertRule } from "./create-alert-rule.ts";
import { deleteAlertRule } from "./delete-alert-rule.ts";
import { evaluateColdStartAlerts } from "./evaluate-cold-start-alerts.ts";
import { evaluateOpenAlertEpisodes } from "./evaluate-open-alert-episodes.ts";
import { listAlertEpisodes } from "./list-alert-episodes.ts";
import { listAlertRules } from "./list-alert-rules.ts";
import { updateAlertRule } from "./update-alert-rule.ts";

// Alert rules on a real database: episodes open once and resolve once however often the
// evaluation runs, and their events go out through the webhook outbox — as signed JSON and
// as a Slack message — to a real HTTP receiver.

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("should have been refused");
    },
    (e: unknown) => e as AppError,
  );

describe("alerts", () => {
  const database = useTestDatabase();
  let admin: Actor;
  let member: Actor;
  let otherOrg: Actor;
  let receiver: TestReceiver;
  let config: WebhookConfig;
  let endpointId: string;
  let deploymentId: string;
  let nodeId: string;
  let replicaId: string;
  let attempt = 0;

  beforeAll(async () => {
    const db = database.current.db;
    const [a, b] = await Promise.all([
      db.org.create({ data: { slug: "alerts-a", name: "A" } }),
      db.org.create({ data: { slug: "alerts-b", name: "B" } }),
    ]);
    const user = await db.user.create({
      data: { id: crypto.randomUUID(), email: "admin@alerts.test", name: "Admin" },
    });
    admin = { type: "user", userId: user.id, orgId: a.id, role: "admin" };
    member = { type: "user", userId: user.id, orgId: a.id, role: "member" };
    otherOrg = { type: "user", userId: user.id, orgId: b.id, role: "owner" };
    receiver = await startTestReceiver();
    config = { sealingKey: randomBytes(32), trustedHosts: new Set([receiver.host]) };
    const { result } = await createEndpoint({
      actor: admin,
      input: {
        slug: "watched",
        name: "Watched",
        gpuType: "A10G",
        maxReplicas: 8,
        deployment: TEST_DEPLOYMENT,
      },
      source: "api",
      db,
    });
    endpointId = result.id;
    const endpoint = await db.endpoint.findUniqueOrThrow({ where: { id: endpointId } });
    deploymentId = endpoint.activeDeploymentId!;
    // A host on the default 125 MiB/s disk: the hint for a slow weights read names it.
    const node = await db.node.create({ data: testNodeRow(a.id, { name: "slow-disk" }) });
    nodeId = node.id;
    replicaId = (
      await db.replica.create({
        data: { orgId: a.id, endpointId, deploymentId, state: "ready" },
      })
    ).id;
  }, 60_000);

  afterAll(async () => {
    await receiver.close();
  });

  /** A closed start of the endpoint: its time to ready against a p90 of 60 s. */
  async function closedStart(actualSeconds: number | null, finishedAt: Date) {
    const db = database.current.db;
    const start = await db.coldStart.create({
      data: {
        orgId: admin.orgId,
        endpointId,
        deploymentId,
        replicaId,
        nodeId,
        attempt: ++attempt,
        path: "pull",
        locality: "cold",
        predictedSeconds: 40,
        predictedP90Seconds: 60,
        actualSeconds,
        status: actualSeconds === null ? "failed" : "succeeded",
        requestedAt: new Date(finishedAt.getTime() - (actualSeconds ?? 30) * 1000),
        readyAt: actualSeconds === null ? null : finishedAt,
        finishedAt,
      },
    });
    if (actualSeconds !== null)
      await db.phaseEvent.createMany({
        data: [
          { coldStartId: start.id, sequence: 1, phase: "pull", startedAt: finishedAt, seconds: 10 },
          {
            coldStartId: start.id,
            sequence: 2,
            phase: "load_weights",
            startedAt: finishedAt,
            seconds: actualSeconds - 10,
            // The model's bytes read at the disk's ceiling.
            bytes: BigInt(Math.round((actualSeconds - 10) * 125 * 1024 * 1024)),
          },
        ],
      });
    return start.id;
  }

  const eventTypes = async (ids: string[]) =>
    (await database.current.db.webhookDelivery.findMany({ where: { id: { in: ids } } }))
      .map((d) => d.eventType)
      .sort();

  it("a slow-start rule fires once per episode, naming the phase and its bound", async () => {
    const db = database.current.db;
    const standard = await createWebhookSubscription({
      actor: admin,
      input: { url: receiver.url, eventTypes: ["alert.firing", "alert.resolved"] },
      db,
      config,
    });
    const slack = await createWebhookSubscription({
      actor: admin,
      input: {
        url: `${receiver.url}/slack`,
        eventTypes: ["alert.firing", "alert.resolved"],
        format: "slack",
      },
      db,
      config,
    });
    expect(slack.format).toBe("slack");
    const rule = await createAlertRule({
      actor: admin,
      input: { kind: "slow_cold_start", name: "slow starts", endpoint: "watched" },
      db,
    });
    const t0 = Date.now() - 3_600_000;
    const at = (minutes: number) => new Date(t0 + minutes * 60_000);

    const first = await closedStart(200, at(1));
    const fired = await evaluateColdStartAlerts({ db, coldStartId: first });
    // One alert.firing per subscription; run again (a retried job), nothing more.
    expect(await eventTypes(fired)).toEqual(["alert.firing", "alert.firing"]);
    expect(await evaluateColdStartAlerts({ db, coldStartId: first })).toEqual([]);
    // A second slow start in the same episode fires nothing.
    expect(
      await evaluateColdStartAlerts({ db, coldStartId: await closedStart(150, at(2)) }),
    ).toEqual([]);

    const [episode] = (await listAlertEpisodes({ actor: admin, query: { state: "open" }, db }))
      .episodes;
    expect(episode).toMatchObject({
      rule: { id: rule.id, kind: "slow_cold_start" },
      endpoint: { id: endpointId, slug: "watched" },
      severity: "warning",
      resolvedAt: null,
    });
    expect(episode!.summary).toMatch(
      /^pull start took 200\.0 s against a predicted p90 of 60\.0 s; load_weights is disk-read bound at 125 MiB\/s/,
    );
    expect(episode!.summary).toContain("provision gp3 throughput");

    // Delivered to the receiver: signed JSON to one, a Slack message to the other.
    for (const deliveryId of fired)
      expect((await deliverWebhook({ db, deliveryId, config, retryInMs: null })).outcome).toBe(
        "succeeded",
      );
    const json = receiver.received.find((r) => !r.body.includes('"blocks"'))!;
    expect(JSON.parse(json.body)).toMatchObject({
      type: "alert.firing",
      data: { endpointSlug: "watched", severity: "warning", summary: episode!.summary },
    });
    expect(json.headers["webhook-signature"]).toMatch(/^v1,/);
    const chat = JSON.parse(receiver.received.find((r) => r.body.includes('"blocks"'))!.body) as {
      text: string;
      blocks: { type: string }[];
    };
    expect(chat.text).toBe(`🔥 Firing: slow starts on watched — ${episode!.summary}`);
    expect(chat.blocks.map((b) => b.type)).toEqual(["header", "section", "section", "context"]);

    // A start within its p90 resolves the episode, once; the next slow start opens a new one.
    const resolved = await evaluateColdStartAlerts({
      db,
      coldStartId: await closedStart(45, at(3)),
    });
    expect(await eventTypes(resolved)).toEqual(["alert.resolved", "alert.resolved"]);
    expect(
      await evaluateColdStartAlerts({ db, coldStartId: await closedStart(50, at(4)) }),
    ).toEqual([]);
    // A history job run late for an older slow start reopens nothing a newer start settled.
    expect(await evaluateColdStartAlerts({ db, coldStartId: first })).toEqual([]);
    const again = await evaluateColdStartAlerts({ db, coldStartId: await closedStart(300, at(5)) });
    expect(await eventTypes(again)).toEqual(["alert.firing", "alert.firing"]);
    const all = (await listAlertEpisodes({ actor: admin, query: {}, db })).episodes;
    expect(all.map((e) => e.resolvedAt === null)).toEqual([true, false]);

    // Disabling the rule resolves what it has open.
    const disabled = await updateAlertRule({
      actor: admin,
      id: rule.id,
      input: { enabled: false },
      db,
    });
    const resolvedIds = disabled.followUps.flatMap((f) =>
      "queue" in f && f.queue === "webhookDelivery" ? [f.payload.deliveryId] : [],
    );
    expect(await eventTypes(resolvedIds)).toEqual(["alert.resolved", "alert.resolved"]);
    expect(disabled.result.openEpisodes).toBe(0);
    await deleteAlertRule({ actor: admin, id: rule.id, db });
    await db.webhookSubscription.deleteMany({ where: { id: { in: [standard.id, slack.id] } } });
  });

  it("an SLO rule pages on fast burn over both windows, and resolves as the windows cool", async () => {
    const db = database.current.db;
    await db.coldStart.deleteMany({ where: { endpointId } });
    const sub = await createWebhookSubscription({
      actor: admin,
      input: { url: receiver.url, eventTypes: ["alert.firing", "alert.resolved"] },
      db,
      config,
    });
    const rule = await createAlertRule({
      actor: admin,
      input: {
        kind: "time_to_ready_slo",
        name: "ready in a minute",
        thresholdSeconds: 60,
        objective: 0.95,
      },
      db,
    });
    expect(rule.endpoint).toBeNull();
    const now = new Date();
    const ago = (s: number) => new Date(now.getTime() - s * 1000);
    // A day of good starts, then in the last 4 minutes three bad ones (a failure, two slow).
    for (let h = 2; h <= 24; h += 2) await closedStart(30, ago(h * 3600));
    await closedStart(120, ago(200));
    await closedStart(null, ago(150));
    const last = await closedStart(90, ago(100));
    const fired = await evaluateColdStartAlerts({ db, coldStartId: last, now });
    // 1 h: 3 of 3 bad (burn 20); 5 min: 3 of 3: page. 3 d: 3 of 15 (burn 4); 6 h: 3 of 5: ticket.
    expect(await eventTypes(fired)).toEqual(["alert.firing", "alert.firing"]);
    const open = (await listAlertEpisodes({ actor: admin, query: { state: "open" }, db })).episodes;
    expect(open.map((e) => e.severity).sort()).toEqual(["page", "ticket"]);
    expect(open.find((e) => e.severity === "page")!.summary).toMatch(
      /^time-to-ready SLO \(95 % within 60 s\) burning 20\.0× over 1 h \(3 of 3 starts bad\) and 20\.0× over 5 min: past 14\.4×$/,
    );
    expect(await evaluateColdStartAlerts({ db, coldStartId: last, now })).toEqual([]);
    expect(await evaluateOpenAlertEpisodes({ db, now })).toEqual([]);

    // 10 minutes on, the 5-minute window is empty but 6 h and 30 min still burn past 6: a page.
    const later = (min: number) => new Date(now.getTime() + min * 60_000);
    expect(await evaluateOpenAlertEpisodes({ db, now: later(10) })).toEqual([]);
    // 40 minutes on, no page condition's short window holds a start: the page resolves; the
    // ticket (6 h over 1) stays open.
    const resolved = await evaluateOpenAlertEpisodes({ db, now: later(40) });
    expect(await eventTypes(resolved)).toEqual(["alert.resolved"]);
    expect(
      (await listAlertEpisodes({ actor: admin, query: { state: "open" }, db })).episodes.map(
        (e) => e.severity,
      ),
    ).toEqual(["ticket"]);
    await deleteAlertRule({ actor: admin, id: rule.id, db });
    await db.webhookSubscription.delete({ where: { id: sub.id } });
  });

  it("checks its input and keeps rules to the org, and to those who may manage them", async () => {
    const db = database.current.db;
    const missing = await refusal(
      createAlertRule({ actor: admin, input: { kind: "time_to_ready_slo", name: "x" }, db }),
    );
    expect(missing).toMatchObject({ code: "BAD_REQUEST" });
    expect(missing.details?.field).toBe("input.thresholdSeconds");
    const unknown = await refusal(
      createAlertRule({
        actor: admin,
        input: { kind: "slow_cold_start", name: "x", endpoint: "nope" },
        db,
      }),
    );
    expect(unknown).toMatchObject({ code: "UNPROCESSABLE" });
    expect(unknown.details?.field).toBe("input.endpoint");
    const rule = await createAlertRule({
      actor: admin,
      input: { kind: "slow_cold_start", name: "slow" },
      db,
    });
    const wrongKind = await refusal(
      updateAlertRule({ actor: admin, id: rule.id, input: { objective: 0.99 }, db }),
    );
    expect(wrongKind).toMatchObject({ code: "UNPROCESSABLE" });
    expect(wrongKind.details?.field).toBe("input.objective");
    expect(
      (
        await refusal(
          createAlertRule({ actor: member, input: { kind: "slow_cold_start", name: "m" }, db }),
        )
      ).code,
    ).toBe("FORBIDDEN");
    // Members read rules; another org sees none and cannot touch this one.
    expect((await listAlertRules({ actor: member, db })).rules.map((r) => r.id)).toEqual([rule.id]);
    expect((await listAlertRules({ actor: otherOrg, db })).rules).toEqual([]);
    expect((await refusal(deleteAlertRule({ actor: otherOrg, id: rule.id, db }))).code).toBe(
      "NOT_FOUND",
    );
    expect(await deleteAlertRule({ actor: admin, id: rule.id, db })).toEqual({
      id: rule.id,
      deleted: true,
    });
  });
});
