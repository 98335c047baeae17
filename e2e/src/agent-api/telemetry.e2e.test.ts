import { G5_XLARGE_JOIN_FIGURES, TEST_AGENT_NETWORK } from "@thaw/core/testing";
// POST /api/agent/v1/telemetry through the built server (`next start`) over HTTP,
// on a database of this file's own; the agent's typed client is pointed at the server.
import { createJoinToken, joinNode, type Actor } from "@thaw/core";
import { startWebServer, type WebServer } from "../web-server.ts";
import { forwardTo } from "./forward.ts";
import { ControlPlaneClient, ControlPlaneError } from "@thaw/node-agent-client";
import {
  TELEMETRY_MAX_EVENTS_PER_BATCH,
  TelemetryResponse,
  type TelemetryBatchInput,
} from "@thaw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

type Handler = (request: Request) => Promise<Response>;

interface ErrorJson {
  error: { code: string; message: string; details: { field?: string } | null };
}

const figures = G5_XLARGE_JOIN_FIGURES;

const t0 = Date.parse("2026-01-01T00:00:00.000Z");
const iso = (seconds: number) => new Date(t0 + seconds * 1000).toISOString();
const pullEvents = (coldStartId: string) => [
  { coldStartId, sequence: 1, phase: "pull", startedAt: iso(0), endedAt: iso(8), bytes: 800 },
  { coldStartId, sequence: 2, phase: "start", startedAt: iso(8), endedAt: iso(10) },
  { coldStartId, sequence: 3, phase: "ready", startedAt: iso(10) },
];

function post(body: unknown, headers: Record<string, string> = {}): Request {
  return new Request("http://localhost/api/agent/v1/telemetry", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

describe("POST /api/agent/v1/telemetry", () => {
  let server: WebServer;
  let t: WebServer["database"];
  let telemetry: Handler;
  let orgId: string;
  let owner: Actor;
  let endpointId: string;
  let deploymentId: string;

  const newNode = async (name: string) => {
    const { token } = await createJoinToken({ actor: owner, input: { ttlSeconds: 600 }, db: t.db });
    return joinNode({
      input: {
        joinToken: token,
        name,
        provider: "sim",
        runtime: "sim",
        agentVersion: "t",
        figures,
      },
      db: t.db,
      network: TEST_AGENT_NETWORK,
      agentCallPublicKey: server.agentCallKeys.publicKey,
    });
  };
  const placeColdStart = async (nodeId: string) => {
    const replica = await t.db.replica.create({
      data: { orgId, endpointId, deploymentId, nodeId, state: "starting" },
    });
    const coldStart = await t.db.coldStart.create({
      data: {
        orgId,
        endpointId,
        deploymentId,
        replicaId: replica.id,
        nodeId,
        path: "pull",
        locality: "cold",
        predictedSeconds: 12,
        status: "dispatched",
      },
    });
    return coldStart.id;
  };
  const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
  const untouched = async (coldStartId: string) => {
    expect(await t.db.phaseEvent.count({ where: { coldStartId } })).toBe(0);
    expect((await t.db.coldStart.findUniqueOrThrow({ where: { id: coldStartId } })).status).toBe(
      "dispatched",
    );
  };

  beforeAll(async () => {
    server = await startWebServer();
    t = server.database;
    orgId = server.orgId;
    owner = { type: "user", userId: server.userId, orgId, role: "owner" };
    const endpoint = await t.db.endpoint.findFirstOrThrow({
      where: { orgId, activeDeploymentId: { not: null } },
    });
    endpointId = endpoint.id;
    deploymentId = endpoint.activeDeploymentId!;
    telemetry = forwardTo(server);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("stores a batch and advances the cold start; a resend answers with duplicates", async () => {
    const node = await newNode("happy");
    const coldStartId = await placeColdStart(node.nodeId);
    const batch = { events: pullEvents(coldStartId) };
    const response = await telemetry(post(batch, bearer(node.credential)));
    expect(response.status).toBe(200);
    // fetch asked for gzip; a 30-byte answer is not worth a zlib stream on the server.
    expect(response.headers.get("content-encoding")).toBeNull();
    expect(await response.json()).toEqual({ accepted: 3, duplicates: 0 });
    const coldStart = await t.db.coldStart.findUniqueOrThrow({
      where: { id: coldStartId },
      include: { replica: true, phases: { orderBy: { sequence: "asc" } } },
    });
    expect(coldStart).toMatchObject({ status: "succeeded", lastSequence: 3, actualSeconds: 10 });
    expect(coldStart.replica.state).toBe("ready");
    expect(coldStart.phases[0]).toMatchObject({ seconds: 8, throughputBps: 100, bytes: 800n });

    const again = await telemetry(post(batch, bearer(node.credential)));
    expect(await again.json()).toEqual({ accepted: 0, duplicates: 3 });
  });

  it("is what ControlPlaneClient.sendTelemetry talks to", async () => {
    const node = await newNode("client");
    const coldStartId = await placeColdStart(node.nodeId);
    const client = new ControlPlaneClient({ baseUrl: `${server.baseUrl}/` });
    const batch: TelemetryBatchInput = {
      events: [{ coldStartId, sequence: 1, phase: "pull", startedAt: iso(0) }],
      outcomes: [{ coldStartId, status: "failed", failedPhase: "pull", endedAt: iso(3) }],
    };
    expect(TelemetryResponse.parse(await client.sendTelemetry(node.credential, batch))).toEqual({
      accepted: 1,
      duplicates: 0,
    });
    expect(await t.db.coldStart.findUniqueOrThrow({ where: { id: coldStartId } })).toMatchObject({
      status: "failed",
      failedPhase: "pull",
    });
    const refused = await client.sendTelemetry("thawnode_nope", batch).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ControlPlaneError);
    expect(refused).toMatchObject({ status: 401, retryable: false });
  });

  it("answers 401 without a credential or with a bad one, and stores nothing", async () => {
    const node = await newNode("unauth");
    const coldStartId = await placeColdStart(node.nodeId);
    const tampered =
      node.credential.slice(0, -4) + (node.credential.endsWith("aaaa") ? "bbbb" : "aaaa");
    for (const headers of [
      {},
      { authorization: "Bearer nonsense" },
      bearer(tampered),
      { authorization: node.credential },
    ]) {
      const response = await telemetry(post({ events: pullEvents(coldStartId) }, headers));
      expect(response.status).toBe(401);
      expect(((await response.json()) as ErrorJson).error.code).toBe("UNAUTHENTICATED");
    }
    await untouched(coldStartId);
  });

  it("answers 404 naming the field for another node's cold start, and stores nothing", async () => {
    const a = await newNode("owner-a");
    const b = await newNode("intruder-b");
    const own = await placeColdStart(b.nodeId);
    const theirs = await placeColdStart(a.nodeId);
    const response = await telemetry(
      post(
        { events: [...pullEvents(own).slice(0, 1), ...pullEvents(theirs)] },
        bearer(b.credential),
      ),
    );
    expect(response.status).toBe(404);
    expect(((await response.json()) as ErrorJson).error).toMatchObject({
      code: "NOT_FOUND",
      details: { field: "events.1.coldStartId" },
    });
    await untouched(own);
    await untouched(theirs);
  });

  // [label, body for a cold start id (object, or raw JSON text), the field named]
  const badBodies: [string, (id: string) => unknown, string, number?][] = [
    [
      "an unknown phase name",
      (id) => ({ events: [{ ...pullEvents(id)[0], phase: "defrost" }] }),
      "body.events.0.phase",
    ],
    [
      "negative bytes",
      (id) => ({ events: [{ ...pullEvents(id)[0], bytes: -1 }] }),
      "body.events.0.bytes",
    ],
    [
      "a NaN-like string for seconds",
      (id) => ({ events: [{ ...pullEvents(id)[0], seconds: "NaN" }] }),
      "body.events.0.seconds",
    ],
    [
      "sequence 2^53+1",
      (id) =>
        JSON.stringify({ events: [pullEvents(id)[0]] }).replace(
          '"sequence":1',
          '"sequence":9007199254740993',
        ),
      "body.events.0.sequence",
    ],
    [
      "an unknown field in an event",
      (id) => ({ events: [{ ...pullEvents(id)[0], nodeId: crypto.randomUUID() }] }),
      "body.events.0.nodeId",
    ],
    [
      "an unknown top-level field",
      (id) => ({ events: pullEvents(id), orgId: crypto.randomUUID() }),
      "body.orgId",
    ],
    [
      `${TELEMETRY_MAX_EVENTS_PER_BATCH + 1} events`,
      (id) => ({
        events: Array.from({ length: TELEMETRY_MAX_EVENTS_PER_BATCH + 1 }, (_, i) => ({
          ...pullEvents(id)[0],
          sequence: i + 1,
        })),
      }),
      "body.events",
    ],
    [
      "a failed outcome without its phase",
      (id) => ({ outcomes: [{ coldStartId: id, status: "failed", endedAt: iso(1) }] }),
      "body.outcomes.0.failedPhase",
      // Each field is well-formed; the rule joining them (a failure names its phase) is not.
      422,
    ],
  ];
  it.each(badBodies)(
    "answers 4xx naming the field for %s, and stores nothing",
    async (_label, makeBody, field, status = 400) => {
      const node = await newNode(`bad-${field}`);
      const coldStartId = await placeColdStart(node.nodeId);
      const response = await telemetry(post(makeBody(coldStartId), bearer(node.credential)));
      expect(response.status).toBe(status);
      const body = (await response.json()) as ErrorJson;
      expect(body.error.code).toBe(status === 400 ? "BAD_REQUEST" : "UNPROCESSABLE");
      expect(body.error.details?.field).toBe(field);
      expect(body.error.message).toContain(field);
      await untouched(coldStartId);
    },
  );

  it("answers 400 for an event that ends before it starts", async () => {
    const node = await newNode("backwards");
    const coldStartId = await placeColdStart(node.nodeId);
    const event = { ...pullEvents(coldStartId)[0], startedAt: iso(9), endedAt: iso(1) };
    const response = await telemetry(post({ events: [event] }, bearer(node.credential)));
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorJson).error.details?.field).toBe("events.0.endedAt");
    await untouched(coldStartId);
  });

  it("answers 413 for a body over 1 MiB", async () => {
    const node = await newNode("huge");
    const coldStartId = await placeColdStart(node.nodeId);
    const huge = JSON.stringify({ events: pullEvents(coldStartId), pad: "x".repeat(1024 * 1024) });
    const response = await telemetry(post(huge, bearer(node.credential)));
    expect(response.status).toBe(413);
    expect(((await response.json()) as ErrorJson).error.code).toBe("PAYLOAD_TOO_LARGE");
    await untouched(coldStartId);
  });
});
