import type { ReplicaState } from "@thaw/db";
import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/index.ts";
import { ingestTelemetry, ingestTelemetryGroup, type TelemetryInput } from "./index.ts";

type NodeActor = Extract<Actor, { type: "node" }>;

/** What ingestTelemetry stored (its follow-ups are checked in their own test). */
const ingest = async (options: Parameters<typeof ingestTelemetry>[0]) =>
  (await ingestTelemetry(options)).result;

const t0 = Date.parse("2026-01-01T00:00:00.000Z");
const iso = (seconds: number) => new Date(t0 + seconds * 1000).toISOString();

const nodeFigures = {
  provider: "sim" as const,
  runtime: "sim" as const,
  instanceType: "g5.xlarge",
  gpuModel: "A10G",
  gpuCount: 1,
  vcpus: 4,
  networkGbps: 10,
  diskReadMiBps: 1000,
  diskWriteMiBps: 125,
  pcieGBps: 12,
};

/** A pull-path cold start as the agent reports it: queue, pull (with bytes), start, ready. */
const pullEvents = (coldStartId: string, withReady = true): TelemetryInput["events"] => [
  { coldStartId, sequence: 1, phase: "queue", startedAt: iso(0), endedAt: iso(1), attributes: {} },
  {
    coldStartId,
    sequence: 2,
    phase: "pull",
    startedAt: iso(1),
    endedAt: iso(11),
    bytes: 1_000_000_000,
    attributes: { layers: 7, cached: false },
  },
  { coldStartId, sequence: 3, phase: "start", startedAt: iso(11), seconds: 4.5, attributes: {} },
  ...(withReady
    ? [
        {
          coldStartId,
          sequence: 4,
          phase: "ready" as const,
          startedAt: iso(16),
          endedAt: iso(16),
          attributes: {},
        },
      ]
    : []),
];

describe("ingestTelemetry", () => {
  let t: TestDatabase;
  let orgId: string;
  let nodeA: NodeActor;
  let nodeB: NodeActor;
  let otherOrgNode: NodeActor;
  let endpointId: string;
  let deploymentId: string;

  const createNode = async (org: string, name: string): Promise<NodeActor> => {
    const node = await t.db.node.create({
      data: { ...nodeFigures, orgId: org, name, state: "ready" },
    });
    return { type: "node", nodeId: node.id, orgId: org };
  };

  /** A replica placed on the node and its dispatched cold start, as `place` + `dispatch` leave them. */
  const placeColdStart = async (
    node: NodeActor,
    replicaState: ReplicaState = "starting",
    where: { endpointId: string; deploymentId: string } = { endpointId, deploymentId },
  ) => {
    const replica = await t.db.replica.create({
      data: { orgId: node.orgId, ...where, nodeId: node.nodeId, state: replicaState },
    });
    const coldStart = await t.db.coldStart.create({
      data: {
        orgId: node.orgId,
        ...where,
        replicaId: replica.id,
        nodeId: node.nodeId,
        path: "pull",
        locality: "cold",
        predictedSeconds: 20,
        status: "dispatched",
        requestedAt: new Date(t0 - 5_000),
      },
    });
    return { replicaId: replica.id, coldStartId: coldStart.id };
  };

  const rowsOf = async (coldStartId: string) => {
    const coldStart = await t.db.coldStart.findUniqueOrThrow({ where: { id: coldStartId } });
    return {
      coldStart,
      replica: await t.db.replica.findUniqueOrThrow({ where: { id: coldStart.replicaId } }),
      events: await t.db.phaseEvent.findMany({
        where: { coldStartId },
        orderBy: { sequence: "asc" },
      }),
    };
  };

  beforeAll(async () => {
    t = await createTestDatabase();
    ({ orgId } = await seedDemo(t.db));
    const endpoint = await t.db.endpoint.findFirstOrThrow({
      where: { orgId, activeDeploymentId: { not: null } },
    });
    endpointId = endpoint.id;
    deploymentId = endpoint.activeDeploymentId!;
    nodeA = await createNode(orgId, "node-a");
    nodeB = await createNode(orgId, "node-b");
    const otherOrg = await t.db.org.create({ data: { slug: "other-org", name: "Other" } });
    otherOrgNode = await createNode(otherOrg.id, "other-node");
  });
  afterAll(async () => {
    await t.drop();
  });

  it("stores events with computed seconds and throughput, and moves the cold start to running", async () => {
    const { coldStartId } = await placeColdStart(nodeA);
    const result = await ingest({
      actor: nodeA,
      input: { events: pullEvents(coldStartId, false), outcomes: [] },
      db: t.db,
    });
    expect(result).toEqual({ accepted: 3, duplicates: 0, closed: [] });
    const { coldStart, replica, events } = await rowsOf(coldStartId);
    expect(coldStart).toMatchObject({ status: "running", lastSequence: 3, readyAt: null });
    expect(replica).toMatchObject({ state: "starting", stateVersion: 0 });
    expect(events.map((e) => [e.phase, e.seconds, e.throughputBps])).toEqual([
      ["queue", 1, null],
      ["pull", 10, 100_000_000],
      ["start", 4.5, null],
    ]);
    expect(events[1]).toMatchObject({ bytes: 1_000_000_000n, attributes: { layers: 7 } });
  });

  it("is idempotent: the same batch twice stores each event once and changes nothing", async () => {
    const { coldStartId } = await placeColdStart(nodeA);
    const batch = { events: pullEvents(coldStartId), outcomes: [] };
    const first = await ingest({ actor: nodeA, input: batch, db: t.db });
    expect(first).toMatchObject({ accepted: 4, duplicates: 0 });
    const before = await rowsOf(coldStartId);
    const again = await ingest({ actor: nodeA, input: batch, db: t.db });
    expect(again).toEqual({ accepted: 0, duplicates: 4, closed: [] });
    expect(await rowsOf(coldStartId)).toEqual(before);
  });

  it("says what follows: each start it closed goes to history, and the org's listeners hear of every start it named", async () => {
    const closing = await placeColdStart(nodeA, "starting");
    const running = await placeColdStart(nodeA, "starting");
    const { result, followUps } = await ingestTelemetry({
      actor: nodeA,
      input: {
        events: [
          ...pullEvents(closing.coldStartId),
          ...pullEvents(running.coldStartId.toUpperCase(), false),
        ],
        outcomes: [],
      },
      db: t.db,
    });
    expect(result.closed).toEqual([{ coldStartId: closing.coldStartId, status: "succeeded" }]);
    expect(followUps).toEqual([
      { queue: "history", payload: { coldStartId: closing.coldStartId } },
      {
        live: "cold_starts",
        orgId,
        coldStartIds: [closing.coldStartId, running.coldStartId],
        closedIds: [closing.coldStartId],
      },
    ]);
    // Nothing stored, nothing named: nothing follows.
    expect(
      await ingestTelemetry({ actor: nodeA, input: { events: [], outcomes: [] }, db: t.db }),
    ).toEqual({ result: { accepted: 0, duplicates: 0, closed: [] }, followUps: [] });
  });

  it("a ready marker closes the cold start as succeeded and makes its replica ready", async () => {
    const { coldStartId, replicaId } = await placeColdStart(nodeA, "starting");
    const result = await ingest({
      actor: nodeA,
      input: { events: pullEvents(coldStartId), outcomes: [] },
      db: t.db,
    });
    expect(result.closed).toEqual([{ coldStartId, status: "succeeded" }]);
    const { coldStart, replica } = await rowsOf(coldStartId);
    expect(coldStart).toMatchObject({
      status: "succeeded",
      lastSequence: 4,
      readyAt: new Date(iso(16)),
      finishedAt: new Date(iso(16)),
      // The sum of the phases (1 + 10 + 4.5 + 0), not readyAt − requestedAt (21 s).
      actualSeconds: 15.5,
      failedPhase: null,
      error: null,
    });
    expect(replica).toMatchObject({
      id: replicaId,
      state: "ready",
      stateVersion: 1,
      readyAt: new Date(iso(16)),
    });
  });

  it("events may arrive over several batches; a succeeded outcome without a marker also closes it", async () => {
    const { coldStartId } = await placeColdStart(nodeA, "placed");
    const [queue, pull, start] = pullEvents(coldStartId, false);
    await ingest({ actor: nodeA, input: { events: [queue!], outcomes: [] }, db: t.db });
    expect((await rowsOf(coldStartId)).coldStart.status).toBe("running");
    await ingest({
      actor: nodeA,
      input: {
        events: [pull!, start!],
        outcomes: [{ coldStartId, status: "succeeded", endedAt: iso(17) }],
      },
      db: t.db,
    });
    const { coldStart, replica } = await rowsOf(coldStartId);
    expect(coldStart).toMatchObject({
      status: "succeeded",
      lastSequence: 3,
      readyAt: new Date(iso(17)),
      actualSeconds: 15.5,
    });
    expect(replica).toMatchObject({ state: "ready", stateVersion: 1 });
  });

  it("a failed outcome fails the cold start and its replica; later reports do not flip it", async () => {
    const { coldStartId } = await placeColdStart(nodeA, "starting");
    const [queue, pull] = pullEvents(coldStartId);
    const result = await ingest({
      actor: nodeA,
      input: {
        events: [queue!, pull!],
        outcomes: [
          {
            coldStartId,
            status: "failed",
            failedPhase: "start",
            error: "engine exited with status 1",
            endedAt: iso(12),
          },
        ],
      },
      db: t.db,
    });
    expect(result.closed).toEqual([{ coldStartId, status: "failed" }]);
    const failed = await rowsOf(coldStartId);
    expect(failed.coldStart).toMatchObject({
      status: "failed",
      failedPhase: "start",
      error: "engine exited with status 1",
      finishedAt: new Date(iso(12)),
      actualSeconds: null,
      readyAt: null,
    });
    expect(failed.replica).toMatchObject({ state: "failed", stateVersion: 1 });

    // A late ready marker is stored (it happened) but neither it nor a succeeded outcome
    // reopens the cold start or revives the replica.
    const late = await ingest({
      actor: nodeA,
      input: {
        events: [{ coldStartId, sequence: 9, phase: "ready", startedAt: iso(30), attributes: {} }],
        outcomes: [{ coldStartId, status: "succeeded", endedAt: iso(30) }],
      },
      db: t.db,
    });
    expect(late).toEqual({ accepted: 1, duplicates: 0, closed: [] });
    const after = await rowsOf(coldStartId);
    expect(after.coldStart).toEqual({ ...failed.coldStart, lastSequence: 9 });
    expect(after.replica).toEqual(failed.replica);
  });

  it("never moves a replica that is draining, even when its cold start succeeds", async () => {
    const { coldStartId } = await placeColdStart(nodeA, "draining");
    await ingest({
      actor: nodeA,
      input: { events: pullEvents(coldStartId), outcomes: [] },
      db: t.db,
    });
    const { coldStart, replica } = await rowsOf(coldStartId);
    expect(coldStart.status).toBe("succeeded");
    expect(replica).toMatchObject({ state: "draining", stateVersion: 0, readyAt: null });
  });

  it("a cancelled cold start ignores outcomes", async () => {
    const { coldStartId } = await placeColdStart(nodeA, "stopped");
    await t.db.coldStart.update({ where: { id: coldStartId }, data: { status: "cancelled" } });
    await ingest({
      actor: nodeA,
      input: {
        events: [],
        outcomes: [{ coldStartId, status: "failed", failedPhase: "pull", endedAt: iso(3) }],
      },
      db: t.db,
    });
    const { coldStart, replica } = await rowsOf(coldStartId);
    expect(coldStart).toMatchObject({ status: "cancelled", failedPhase: null, finishedAt: null });
    expect(replica.state).toBe("stopped");
  });

  it("node B cannot write node A's cold start, not even inside a batch of its own", async () => {
    const a = await placeColdStart(nodeA);
    const b = await placeColdStart(nodeB);
    const beforeA = await rowsOf(a.coldStartId);
    const beforeB = await rowsOf(b.coldStartId);

    await expect(
      ingest({
        actor: nodeB,
        input: { events: pullEvents(a.coldStartId), outcomes: [] },
        db: t.db,
      }),
    ).rejects.toMatchObject({ code: "NOT_FOUND", details: { field: "events.0.coldStartId" } });

    const [ownQueue] = pullEvents(b.coldStartId);
    const [, foreignPull] = pullEvents(a.coldStartId);
    await expect(
      ingest({
        actor: nodeB,
        input: { events: [ownQueue!, foreignPull!], outcomes: [] },
        db: t.db,
      }),
    ).rejects.toMatchObject({ code: "NOT_FOUND", details: { field: "events.1.coldStartId" } });

    await expect(
      ingest({
        actor: nodeB,
        input: {
          events: [ownQueue!],
          outcomes: [
            { coldStartId: a.coldStartId, status: "failed", failedPhase: "pull", endedAt: iso(2) },
          ],
        },
        db: t.db,
      }),
    ).rejects.toMatchObject({ code: "NOT_FOUND", details: { field: "outcomes.0.coldStartId" } });

    expect(await rowsOf(a.coldStartId)).toEqual(beforeA);
    expect(await rowsOf(b.coldStartId)).toEqual(beforeB);
  });

  it("another org's cold start id is NOT_FOUND, exactly like an id that does not exist", async () => {
    const foreign = await t.db.endpoint.create({
      data: { orgId: otherOrgNode.orgId, slug: "theirs", name: "Theirs", gpuType: "A10G" },
    });
    const foreignDeployment = await t.db.deployment.create({
      data: {
        orgId: otherOrgNode.orgId,
        endpointId: foreign.id,
        version: 1,
        imageRef: "registry.example.com/theirs:1",
        imageDigest: `sha256:${"a".repeat(64)}`,
        imageBytes: 1n,
        modelSource: "s3://theirs/model",
        modelBytes: 1n,
        modelFormat: "safetensors",
        engine: "vllm",
      },
    });
    const theirs = await placeColdStart(otherOrgNode, "starting", {
      endpointId: foreign.id,
      deploymentId: foreignDeployment.id,
    });
    const before = await rowsOf(theirs.coldStartId);
    const refusal = async (coldStartId: string) => {
      try {
        await ingest({
          actor: nodeA,
          input: { events: pullEvents(coldStartId), outcomes: [] },
          db: t.db,
        });
        throw new Error("expected a refusal");
      } catch (error) {
        const e = error as { code: string; message: string; details: unknown };
        return {
          code: e.code,
          message: e.message.replace(coldStartId, "<id>"),
          details: e.details,
        };
      }
    };
    const forTheirs = await refusal(theirs.coldStartId);
    expect(forTheirs).toMatchObject({
      code: "NOT_FOUND",
      details: { field: "events.0.coldStartId" },
    });
    expect(forTheirs).toEqual(await refusal(crypto.randomUUID()));
    expect(await rowsOf(theirs.coldStartId)).toEqual(before);
  });

  it("concurrent copies of one batch store each event once", async () => {
    const { coldStartId } = await placeColdStart(nodeA, "starting");
    const batch = { events: pullEvents(coldStartId), outcomes: [] };
    const results = await Promise.all(
      Array.from({ length: 5 }, () => ingest({ actor: nodeA, input: batch, db: t.db })),
    );
    expect(results.reduce((sum, r) => sum + r.accepted, 0)).toBe(4);
    expect(results.reduce((sum, r) => sum + r.duplicates, 0)).toBe(16);
    expect(results.flatMap((r) => r.closed)).toEqual([{ coldStartId, status: "succeeded" }]);
    const { coldStart, replica, events } = await rowsOf(coldStartId);
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
    expect(coldStart).toMatchObject({ status: "succeeded", actualSeconds: 15.5 });
    expect(replica).toMatchObject({ state: "ready", stateVersion: 1 });
  });

  it("a group answers each batch as it would be answered alone, and refuses only the batch that is wrong", async () => {
    const a = await placeColdStart(nodeA, "starting");
    const b = await placeColdStart(nodeB, "starting");
    const split = await placeColdStart(nodeA, "starting");
    const stranger = await placeColdStart(nodeA, "starting");
    const before = await rowsOf(stranger.coldStartId);
    const [first, second, third, ready] = pullEvents(split.coldStartId);
    const outcomes = await ingestTelemetryGroup({
      submissions: [
        { actor: nodeA, input: { events: pullEvents(a.coldStartId), outcomes: [] } },
        // node B names node A's start: refused alone, nothing of it stored.
        {
          actor: nodeB,
          input: {
            events: [...pullEvents(b.coldStartId), ...pullEvents(stranger.coldStartId)],
            outcomes: [],
          },
        },
        // One start over two batches of the group, the second resending an event of the first.
        { actor: nodeA, input: { events: [first!, second!], outcomes: [] } },
        { actor: nodeA, input: { events: [second!, third!, ready!], outcomes: [] } },
        // A bad event: BAD_REQUEST for this batch alone.
        {
          actor: nodeB,
          input: {
            events: [{ ...pullEvents(b.coldStartId)[1]!, endedAt: iso(0) }],
            outcomes: [],
          },
        },
        // Another org's node naming its own org's nothing: an empty batch is a no-op.
        { actor: otherOrgNode, input: { events: [], outcomes: [] } },
      ],
      db: t.db,
    });
    expect(outcomes.map((o) => (o.ok ? o.value.result : o.error))).toEqual([
      { accepted: 4, duplicates: 0, closed: [{ coldStartId: a.coldStartId, status: "succeeded" }] },
      expect.objectContaining({ code: "NOT_FOUND", details: { field: "events.4.coldStartId" } }),
      {
        accepted: 2,
        duplicates: 0,
        closed: [{ coldStartId: split.coldStartId, status: "succeeded" }],
      },
      { accepted: 2, duplicates: 1, closed: [] },
      expect.objectContaining({ code: "BAD_REQUEST", details: { field: "events.0.endedAt" } }),
      { accepted: 0, duplicates: 0, closed: [] },
    ]);
    // The closed start's follow-ups go with the batch that closed it; the live notice with each.
    expect(outcomes[3]).toMatchObject({
      ok: true,
      value: {
        followUps: [
          { live: "cold_starts", orgId, coldStartIds: [split.coldStartId], closedIds: [] },
        ],
      },
    });
    expect(await rowsOf(a.coldStartId)).toMatchObject({
      coldStart: { status: "succeeded", actualSeconds: 15.5 },
      replica: { state: "ready" },
    });
    expect(await rowsOf(split.coldStartId)).toMatchObject({
      coldStart: { status: "succeeded", lastSequence: 4, actualSeconds: 15.5 },
      replica: { state: "ready", stateVersion: 1 },
    });
    expect((await rowsOf(split.coldStartId)).events.map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
    expect((await rowsOf(b.coldStartId)).events).toEqual([]);
    expect(await rowsOf(stranger.coldStartId)).toEqual(before);
  });

  it("stores ids as UUIDv7, time-ordered like Prisma's uuid(7)", async () => {
    const { coldStartId } = await placeColdStart(nodeA);
    await ingest({
      actor: nodeA,
      input: { events: pullEvents(coldStartId), outcomes: [] },
      db: t.db,
    });
    const { events } = await rowsOf(coldStartId);
    for (const e of events) {
      expect(e.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const millis = parseInt(e.id.replace(/-/g, "").slice(0, 12), 16);
      expect(Math.abs(millis - e.createdAt.getTime())).toBeLessThan(60_000);
    }
  });

  it("refuses an event that ends before it starts, storing nothing", async () => {
    const { coldStartId } = await placeColdStart(nodeA);
    await expect(
      ingest({
        actor: nodeA,
        input: {
          events: [
            ...pullEvents(coldStartId, false),
            {
              coldStartId,
              sequence: 4,
              phase: "warmup",
              startedAt: iso(20),
              endedAt: iso(19),
              attributes: {},
            },
          ],
          outcomes: [],
        },
        db: t.db,
      }),
    ).rejects.toMatchObject({ code: "BAD_REQUEST", details: { field: "events.3.endedAt" } });
    expect(await t.db.phaseEvent.count({ where: { coldStartId } })).toBe(0);
  });

  it("only a node may send telemetry; an empty batch is a no-op", async () => {
    await expect(
      ingest({
        actor: { type: "system", orgId },
        input: { events: [], outcomes: [] },
        db: t.db,
      }),
    ).rejects.toMatchObject({ code: "FORBIDDEN" });
    expect(await ingest({ actor: nodeA, input: { events: [], outcomes: [] }, db: t.db })).toEqual({
      accepted: 0,
      duplicates: 0,
      closed: [],
    });
  });
});
