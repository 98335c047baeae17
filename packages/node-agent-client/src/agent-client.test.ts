import { randomUUID } from "node:crypto";
import { type Server, createServer } from "node:https";
import { type AddressInfo } from "node:net";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  generateAgentCallKeyPair,
  parseAgentCallAuthorization,
  parseAgentCallPrivateKey,
  parseAgentCallPublicKey,
  verifyAgentCall,
} from "./agent-call-signature.ts";
import { AgentApiError, AgentClient, type AgentClientOptions } from "./agent-client.ts";
import { testTlsCertificate } from "./testing/tls-certificate.ts";

let server: Server | undefined;
let tls: Awaited<ReturnType<typeof testTlsCertificate>>;
let other: Awaited<ReturnType<typeof testTlsCertificate>>;
const keys = generateAgentCallKeyPair();
const NODE = "0190a5c4-0000-7000-8000-00000000000a";
beforeAll(async () => {
  [tls, other] = await Promise.all([testTlsCertificate(), testTlsCertificate()]);
});
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A client of the test agent's node, signing with the test key, pinned to its certificate. */
function clientFor(baseUrl: string, extra: Partial<AgentClientOptions> = {}) {
  return new AgentClient({
    baseUrl,
    nodeId: NODE,
    signingKey: parseAgentCallPrivateKey(keys.privateKey),
    certSha256: tls.certSha256,
    ...extra,
  });
}

/** An https agent that answers from a script, one entry per request. */
async function agent(script: { status: number; body: unknown; delayMs?: number }[]) {
  const seen: { method: string; url: string; auth: string | undefined; body: string }[] = [];
  server = createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      seen.push({
        method: request.method ?? "",
        url: request.url ?? "",
        auth: request.headers.authorization,
        body,
      });
      const next = script[Math.min(seen.length - 1, script.length - 1)]!;
      setTimeout(() => {
        response.writeHead(next.status, { "content-type": "application/json" });
        response.end(JSON.stringify(next.body));
      }, next.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hosts/node-a`;
  return { url, seen };
}

const accepted = (replicaId: string, coldStartId: string) => ({
  replicaId,
  coldStartId,
  path: "pull",
  acceptedAt: new Date().toISOString(),
});
const start = () => ({
  replicaId: randomUUID(),
  coldStartId: randomUUID(),
  path: "pull" as const,
  deployment: { imageRef: "ghcr.io/thaw/llama:v1" },
  readiness: { port: 8000, timeoutSeconds: 60 },
});

describe("AgentClient", () => {
  it("calls the host's base URL, signed for the node over what was sent", async () => {
    const request = start();
    const { url, seen } = await agent([
      { status: 202, body: accepted(request.replicaId, request.coldStartId) },
    ]);
    const client = clientFor(`${url}/`);
    expect(await client.startReplica(request)).toMatchObject({ replicaId: request.replicaId });
    expect(seen[0]).toMatchObject({ method: "POST", url: "/hosts/node-a/v1/replicas" });
    expect(JSON.parse(seen[0]!.body)).toEqual(request);
    const signed = parseAgentCallAuthorization(seen[0]!.auth);
    expect(signed?.nodeId).toBe(NODE);
    const publicKey = parseAgentCallPublicKey(keys.publicKey);
    const sent = { method: "POST", path: seen[0]!.url, body: seen[0]!.body };
    expect(verifyAgentCall([publicKey], signed!, sent)).toBeNull();
    // Not for another path or body, nor with another key, nor a minute and more later.
    expect(verifyAgentCall([publicKey], signed!, { ...sent, path: "/v1/replicas" })).toBe(
      "bad_signature",
    );
    expect(verifyAgentCall([publicKey], signed!, { ...sent, body: `${sent.body} ` })).toBe(
      "bad_signature",
    );
    const stranger = parseAgentCallPublicKey(generateAgentCallKeyPair().publicKey);
    expect(verifyAgentCall([stranger], signed!, sent)).toBe("bad_signature");
    expect(verifyAgentCall([publicKey], signed!, sent, Date.now() + 61_000)).toBe("stale");
  });

  it("sends nothing to an agent whose certificate is not the pinned one, and does not retry", async () => {
    const { url, seen } = await agent([{ status: 200, body: {} }]);
    const client = clientFor(url, { certSha256: other.certSha256, retries: 3, retryBaseMs: 1 });
    const error = await client.inventory().catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 0, code: "certificate_mismatch", retryable: false });
    expect(seen).toHaveLength(0);
  });

  it("never calls an agent over plain http or without a pin", async () => {
    const { url, seen } = await agent([{ status: 200, body: {} }]);
    await expect(clientFor(url.replace("https:", "http:")).inventory()).rejects.toMatchObject({
      status: 421,
      code: "agent_address_refused",
    });
    await expect(
      clientFor(url, { certSha256: () => Promise.resolve(null) }).inventory(),
    ).rejects.toMatchObject({
      status: 421,
      code: "agent_address_refused",
    });
    expect(seen).toHaveLength(0);
  });

  it("retries a gateway error or an agent that has not joined yet, then succeeds", async () => {
    const request = start();
    const { url, seen } = await agent([
      { status: 502, body: {} },
      { status: 503, body: { error: { code: "not_joined", message: "later" } } },
      { status: 202, body: accepted(request.replicaId, request.coldStartId) },
    ]);
    const client = clientFor(url, { retries: 2, retryBaseMs: 1 });
    await client.startReplica(request);
    expect(seen).toHaveLength(3);
  });

  it("never retries a refusal, and names the code and field", async () => {
    const { url, seen } = await agent([
      {
        status: 409,
        body: {
          error: { code: "path_unsupported", message: "no stargz", details: { field: "path" } },
        },
      },
    ]);
    const client = clientFor(url, { retries: 3, retryBaseMs: 1 });
    const error = await client.startReplica(start()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentApiError);
    expect(error).toMatchObject({
      status: 409,
      code: "path_unsupported",
      field: "path",
      retryable: false,
    });
    expect(seen).toHaveLength(1);
  });

  it("does not retry an agent that is shutting down", async () => {
    const { url, seen } = await agent([
      { status: 503, body: { error: { code: "shutting_down", message: "bye" } } },
    ]);
    const client = clientFor(url, { retries: 3, retryBaseMs: 1 });
    await expect(client.stopReplica(randomUUID())).rejects.toMatchObject({
      status: 503,
      code: "shutting_down",
    });
    expect(seen).toHaveLength(1);
  });

  it("times out a silent agent as unreachable (status 0), retrying within the budget", async () => {
    const { url, seen } = await agent([{ status: 200, body: {}, delayMs: 500 }]);
    const client = clientFor(url, { timeoutMs: 50, retries: 1, retryBaseMs: 1 });
    await expect(client.inventory()).rejects.toMatchObject({ status: 0, code: "unreachable" });
    expect(seen.length).toBeGreaterThanOrEqual(1);
  });
});
