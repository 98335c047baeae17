import { G5_XLARGE_JOIN_FIGURES } from "@thaw/core/testing";
// The agent API through the built server (`next start`), on a database of this file's own:
// each case builds the Request an agent would send and the server answers it over HTTP.
import { createJoinToken, type Actor } from "@thaw/core";
import { startWebServer, type WebServer } from "../web-server.ts";
import { forwardTo } from "./forward.ts";
import { AGENT_PROTOCOL_VERSION, JoinResponse } from "@thaw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

type Handler = (request: Request) => Promise<Response>;

const figures = G5_XLARGE_JOIN_FIGURES;
const joinBody = (joinToken: string, name = "node-a") => ({
  joinToken,
  name,
  provider: "sim",
  runtime: "sim",
  agentVersion: "test",
  figures,
});
const beat = { agentVersion: "test", gpusFree: 1, gpusUsed: 0 };

function post(path: string, body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(`http://localhost${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

interface ErrorJson {
  error: {
    code: string;
    message: string;
    details: { field?: string; issues?: { path: string; message: string }[] } | null;
  };
}

describe("agent API /api/agent/v1", () => {
  let server: WebServer;
  let t: WebServer["database"];
  let owner: Actor;
  let join: Handler;
  let heartbeat: Handler;

  const newToken = async () =>
    (await createJoinToken({ actor: owner, input: { ttlSeconds: 600 }, db: t.db })).token;
  const joinNode = async (name: string) => {
    const response = await join(post("/api/agent/v1/join", joinBody(await newToken(), name)));
    expect(response.status).toBe(200);
    return JoinResponse.parse(await response.json());
  };

  beforeAll(async () => {
    // No node-credential secret anywhere: startWebServer strips one from its environment.
    server = await startWebServer();
    t = server.database;
    owner = { type: "user", userId: server.userId, orgId: server.orgId, role: "owner" };
    join = forwardTo(server);
    heartbeat = forwardTo(server);
  });
  afterAll(async () => {
    await server?.stop();
  });

  describe("with no node-credential secret in the web tier", () => {
    it("joins with a random credential that works, renews it once rotated, and answers the scheduler's public key", async () => {
      const a = await joinNode("secretless-a");
      const b = await joinNode("secretless-b");
      expect(a.credential).not.toBe(b.credential);
      expect(a.agentCallPublicKey).toBe(server.agentCallKeys.publicKey);
      const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
      expect(
        (await heartbeat(post("/api/agent/v1/heartbeat", beat, bearer(a.credential)))).status,
      ).toBe(200);
      // An operator rotates it: the heartbeat says so, the agent fetches a new credential, and
      // its first use retires the old one.
      await t.db.node.update({
        where: { id: a.nodeId },
        data: { credentialRotationRequestedAt: new Date() },
      });
      const asked = await heartbeat(post("/api/agent/v1/heartbeat", beat, bearer(a.credential)));
      expect(((await asked.json()) as { rotateCredential: boolean }).rotateCredential).toBe(true);
      const renewed = await heartbeat(post("/api/agent/v1/credential", {}, bearer(a.credential)));
      expect(renewed.status).toBe(200);
      const { credential } = (await renewed.json()) as { credential: string };
      const next = await heartbeat(post("/api/agent/v1/heartbeat", beat, bearer(credential)));
      expect(((await next.json()) as { rotateCredential: boolean }).rotateCredential).toBe(false);
      expect(
        (await heartbeat(post("/api/agent/v1/heartbeat", beat, bearer(a.credential)))).status,
      ).toBe(401);
      expect(
        (
          await heartbeat(
            post(
              "/api/agent/v1/credential",
              {},
              bearer("thawnode_000000000000_nope-nope-nope-nope-x"),
            ),
          )
        ).status,
      ).toBe(401);
    });
  });

  describe("POST /join", () => {
    it("exchanges a valid join token for a node and its credential", async () => {
      const token = await newToken();
      const response = await join(post("/api/agent/v1/join", joinBody(token, "joiner")));
      expect(response.status).toBe(200);
      const body = JoinResponse.parse(await response.json());
      expect(body.credential).toMatch(/^thawnode_/);
      expect(body.heartbeatIntervalSeconds).toBeGreaterThan(0);
      const node = await t.db.node.findUniqueOrThrow({ where: { id: body.nodeId } });
      expect(node).toMatchObject({
        name: "joiner",
        orgId: owner.orgId,
        state: "booting",
        instanceType: "g5.xlarge",
      });
      expect(node.credentialHash).not.toContain(body.credential);
    });

    it("refuses a token that was already used with 401", async () => {
      const token = await newToken();
      expect((await join(post("/api/agent/v1/join", joinBody(token, "first")))).status).toBe(200);
      const again = await join(post("/api/agent/v1/join", joinBody(token, "second")));
      expect(again.status).toBe(401);
      const body = (await again.json()) as ErrorJson;
      expect(body.error).toMatchObject({
        code: "UNAUTHENTICATED",
        details: { field: "joinToken" },
      });
      expect(await t.db.node.count({ where: { name: "second" } })).toBe(0);
    });

    it("refuses unknown and expired tokens with 401", async () => {
      const unknown = await join(
        post("/api/agent/v1/join", joinBody("thawjoin_000000000000_notarealtokenatallxxxx")),
      );
      expect(unknown.status).toBe(401);
      const { token, id } = await createJoinToken({
        actor: owner,
        input: { ttlSeconds: 600 },
        db: t.db,
      });
      await t.db.joinToken.update({
        where: { id },
        data: { expiresAt: new Date(Date.now() - 1000) },
      });
      expect((await join(post("/api/agent/v1/join", joinBody(token)))).status).toBe(401);
    });

    it("refuses an agent of a protocol version it does not speak with 422 naming protocolVersion, leaving the token good", async () => {
      const { token, id } = await createJoinToken({
        actor: owner,
        input: { ttlSeconds: 600 },
        db: t.db,
      });
      const joinSpeaking = (protocolVersion: number) =>
        join(post("/api/agent/v1/join", { ...joinBody(token, "next-release"), protocolVersion }));
      const refused = await joinSpeaking(AGENT_PROTOCOL_VERSION + 1);
      expect(refused.status).toBe(422);
      const body = (await refused.json()) as ErrorJson;
      expect(body.error).toMatchObject({
        code: "UNPROCESSABLE",
        details: { field: "protocolVersion" },
      });
      expect(body.error.message).toContain(
        `protocolVersion: the agent speaks protocol version ${AGENT_PROTOCOL_VERSION + 1}`,
      );
      expect(await t.db.node.count({ where: { name: "next-release" } })).toBe(0);
      expect((await t.db.joinToken.findUniqueOrThrow({ where: { id } })).usedAt).toBeNull();
      // The same host, upgraded, joins with the same token.
      expect((await joinSpeaking(AGENT_PROTOCOL_VERSION)).status).toBe(200);
    });

    const badBodies: [string, (token: string) => unknown, string][] = [
      ["missing figures", (token) => ({ ...joinBody(token), figures: undefined }), "body.figures"],
      [
        "a negative figure",
        (token) => ({ ...joinBody(token), figures: { ...figures, networkGbps: -1 } }),
        "body.figures.networkGbps",
      ],
      [
        "a NaN-like figure (string)",
        (token) => ({ ...joinBody(token), figures: { ...figures, diskWriteMiBps: "NaN" } }),
        "body.figures.diskWriteMiBps",
      ],
      [
        "a fractional GPU count",
        (token) => ({ ...joinBody(token), figures: { ...figures, gpuCount: 1.5 } }),
        "body.figures.gpuCount",
      ],
      ["an unknown field", (token) => ({ ...joinBody(token), isAdmin: true }), "body.isAdmin"],
      [
        "an unknown provider",
        (token) => ({ ...joinBody(token), provider: "gcp" }),
        "body.provider",
      ],
      [
        "a protocol version that is not a whole number",
        (token) => ({ ...joinBody(token), protocolVersion: "1" }),
        "body.protocolVersion",
      ],
    ];
    it.each(badBodies)(
      "answers 400 naming the field for %s, and stores nothing",
      async (_label, makeBody, field) => {
        const { token, id } = await createJoinToken({
          actor: owner,
          input: { ttlSeconds: 600 },
          db: t.db,
        });
        const nodesBefore = await t.db.node.count();
        const response = await join(post("/api/agent/v1/join", makeBody(token)));
        expect(response.status).toBe(400);
        const body = (await response.json()) as ErrorJson;
        expect(body.error.code).toBe("BAD_REQUEST");
        expect(body.error.details?.field).toBe(field);
        expect(body.error.message).toContain(field);
        expect(await t.db.node.count()).toBe(nodesBefore);
        expect((await t.db.joinToken.findUniqueOrThrow({ where: { id } })).usedAt).toBeNull();
      },
    );

    it("names an unknown field in the message", async () => {
      const response = await join(
        post("/api/agent/v1/join", { ...joinBody(await newToken()), isAdmin: true }),
      );
      expect(((await response.json()) as ErrorJson).error.message).toContain("isAdmin");
    });

    it("refuses an Infinity figure (1e999 in JSON) with 400", async () => {
      const raw = JSON.stringify(joinBody(await newToken())).replace(
        '"networkGbps":10',
        '"networkGbps":1e999',
      );
      const response = await join(post("/api/agent/v1/join", raw));
      expect(response.status).toBe(400);
      expect(((await response.json()) as ErrorJson).error.details?.field).toBe(
        "body.figures.networkGbps",
      );
    });

    it("answers 400 for a body that is not JSON", async () => {
      const response = await join(post("/api/agent/v1/join", "{not json"));
      expect(response.status).toBe(400);
      expect(((await response.json()) as ErrorJson).error).toMatchObject({
        code: "BAD_REQUEST",
        details: { field: "body" },
      });
    });

    it("answers 413 for a body over 1 MiB, with or without Content-Length", async () => {
      const huge = JSON.stringify({ ...joinBody(await newToken()), name: "x".repeat(1024 * 1024) });
      expect((await join(post("/api/agent/v1/join", huge))).status).toBe(413);
      const bytes = new TextEncoder().encode(huge);
      const streamed = new Request("http://localhost/api/agent/v1/join", {
        method: "POST",
        body: new ReadableStream({
          start(controller) {
            for (let i = 0; i < bytes.length; i += 64 * 1024)
              controller.enqueue(bytes.subarray(i, i + 64 * 1024));
            controller.close();
          },
        }),
        duplex: "half",
      } as RequestInit);
      const response = await join(streamed);
      expect(response.status).toBe(413);
      expect(((await response.json()) as ErrorJson).error.code).toBe("PAYLOAD_TOO_LARGE");
    });
  });

  describe("POST /heartbeat", () => {
    it("marks the node ready and records the heartbeat time", async () => {
      const node = await joinNode("beater");
      const before = Date.now();
      const response = await heartbeat(
        post("/api/agent/v1/heartbeat", beat, { authorization: `Bearer ${node.credential}` }),
      );
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ nodeId: node.nodeId, state: "ready" });
      const row = await t.db.node.findUniqueOrThrow({ where: { id: node.nodeId } });
      expect(row.state).toBe("ready");
      expect(row.lastHeartbeatAt!.getTime()).toBeGreaterThanOrEqual(before - 1000);
    });

    it("answers 401 for a wrong, malformed or missing credential", async () => {
      const node = await joinNode("wrong-cred");
      const tampered =
        node.credential.slice(0, -4) + (node.credential.endsWith("aaaa") ? "bbbb" : "aaaa");
      const attempts: Record<string, string>[] = [
        { authorization: `Bearer ${tampered}` },
        { authorization: "Bearer nonsense" },
        { authorization: node.credential },
        {},
      ];
      for (const headers of attempts) {
        const response = await heartbeat(post("/api/agent/v1/heartbeat", beat, headers));
        expect(response.status).toBe(401);
        expect(((await response.json()) as ErrorJson).error.code).toBe("UNAUTHENTICATED");
      }
      expect(
        (await t.db.node.findUniqueOrThrow({ where: { id: node.nodeId } })).lastHeartbeatAt,
      ).toBeNull();
    });

    it("a node cannot heartbeat as another", async () => {
      const a = await joinNode("node-a-self");
      const b = await joinNode("node-b-other");
      // Naming the other node in the body is refused as an unknown field…
      const spoof = await heartbeat(
        post(
          "/api/agent/v1/heartbeat",
          { ...beat, nodeId: b.nodeId },
          { authorization: `Bearer ${a.credential}` },
        ),
      );
      expect(spoof.status).toBe(400);
      expect(((await spoof.json()) as ErrorJson).error.message).toContain("nodeId");
      // …and a valid heartbeat with A's credential touches A only.
      const own = await heartbeat(
        post("/api/agent/v1/heartbeat", beat, { authorization: `Bearer ${a.credential}` }),
      );
      expect(await own.json()).toMatchObject({ nodeId: a.nodeId });
      expect(
        (await t.db.node.findUniqueOrThrow({ where: { id: a.nodeId } })).lastHeartbeatAt,
      ).not.toBeNull();
      const other = await t.db.node.findUniqueOrThrow({ where: { id: b.nodeId } });
      expect(other.lastHeartbeatAt).toBeNull();
      expect(other.state).toBe("booting");
    });

    it("answers 400 naming the field for a bad heartbeat body, and changes nothing", async () => {
      const node = await joinNode("bad-beat");
      const response = await heartbeat(
        post(
          "/api/agent/v1/heartbeat",
          { ...beat, gpusFree: -1 },
          { authorization: `Bearer ${node.credential}` },
        ),
      );
      expect(response.status).toBe(400);
      expect(((await response.json()) as ErrorJson).error.details?.field).toBe("body.gpusFree");
      expect(
        (await t.db.node.findUniqueOrThrow({ where: { id: node.nodeId } })).lastHeartbeatAt,
      ).toBeNull();
    });

    it("refuses a terminated node's credential with 401", async () => {
      const node = await joinNode("terminated");
      await t.db.node.update({ where: { id: node.nodeId }, data: { state: "terminated" } });
      const response = await heartbeat(
        post("/api/agent/v1/heartbeat", beat, { authorization: `Bearer ${node.credential}` }),
      );
      expect(response.status).toBe(401);
    });
  });
});
