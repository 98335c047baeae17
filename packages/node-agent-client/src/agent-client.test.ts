import { randomUUID } from "node:crypto";
import { type Server, createServer } from "node:http";
import { type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AgentApiError, AgentClient } from "./agent-client.ts";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** An agent that answers from a script, one entry per request. */
async function agent(script: { status: number; body: unknown; delayMs?: number }[]) {
  const seen: { method: string; url: string; auth: string | undefined; body: string }[] = [];
  server = createServer((request, response) => {
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
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hosts/node-a`;
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
  it("calls the host's base URL with the node credential", async () => {
    const request = start();
    const { url, seen } = await agent([
      { status: 202, body: accepted(request.replicaId, request.coldStartId) },
    ]);
    const client = new AgentClient({ baseUrl: `${url}/`, credential: "thawnode_x" });
    expect(await client.startReplica(request)).toMatchObject({ replicaId: request.replicaId });
    expect(seen[0]).toMatchObject({
      method: "POST",
      url: "/hosts/node-a/v1/replicas",
      auth: "Bearer thawnode_x",
    });
    expect(JSON.parse(seen[0]!.body)).toEqual(request);
  });

  it("retries a gateway error or an agent that has not joined yet, then succeeds", async () => {
    const request = start();
    const { url, seen } = await agent([
      { status: 502, body: {} },
      { status: 503, body: { error: { code: "not_joined", message: "later" } } },
      { status: 202, body: accepted(request.replicaId, request.coldStartId) },
    ]);
    const client = new AgentClient({ baseUrl: url, credential: "c", retries: 2, retryBaseMs: 1 });
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
    const client = new AgentClient({ baseUrl: url, credential: "c", retries: 3, retryBaseMs: 1 });
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
    const client = new AgentClient({ baseUrl: url, credential: "c", retries: 3, retryBaseMs: 1 });
    await expect(client.stopReplica(randomUUID())).rejects.toMatchObject({
      status: 503,
      code: "shutting_down",
    });
    expect(seen).toHaveLength(1);
  });

  it("times out a silent agent as unreachable (status 0), retrying within the budget", async () => {
    const { url, seen } = await agent([{ status: 200, body: {}, delayMs: 500 }]);
    const client = new AgentClient({
      baseUrl: url,
      credential: "c",
      timeoutMs: 50,
      retries: 1,
      retryBaseMs: 1,
    });
    await expect(client.inventory()).rejects.toMatchObject({ status: 0, code: "unreachable" });
    expect(seen.length).toBeGreaterThanOrEqual(1);
  });
});
