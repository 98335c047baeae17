import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateAgentCallKeyPair, parseAgentCallPrivateKey } from "./agent-call-signature.ts";
import { AgentApiError, AgentClient } from "./agent-client.ts";
import { CertificatePinError, keepAliveFetch } from "./keep-alive-fetch.ts";
import { testTlsCertificate } from "./testing/tls-certificate.ts";

// keepAliveFetch stands in for fetch in the agent's and the scheduler's clients: what they
// read of an answer, and how a timeout or a refused connection reaches them, must be fetch's.

describe("keepAliveFetch over a real HTTP server", () => {
  let server: Server;
  let base: string;
  const sockets = new Set<unknown>();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/slow") return void setTimeout(() => res.end("late"), 2_000);
      res.writeHead(req.url?.startsWith("/missing") ? 404 : 200, {
        "content-type": "application/json",
      });
      res.end(
        JSON.stringify({
          method: req.method,
          authorization: req.headers.authorization ?? null,
          body: Buffer.concat(chunks).toString("utf8"),
        }),
      );
    });
  };

  beforeAll(async () => {
    server = createServer(handle);
    server.on("connection", (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("sends method, headers and body, and gives back status and text", async () => {
    const fetchImpl = keepAliveFetch();
    const response = await fetchImpl(`${base}/echo`, {
      method: "POST",
      headers: { authorization: "Bearer t0ken", "content-type": "application/json" },
      body: '{"a":1}',
    });
    expect([response.ok, response.status]).toEqual([true, 200]);
    expect(JSON.parse(await response.text())).toEqual({
      method: "POST",
      authorization: "Bearer t0ken",
      body: '{"a":1}',
    });
    const missing = await fetchImpl(`${base}/missing`);
    expect([missing.ok, missing.status]).toEqual([false, 404]);
  });

  it("reuses one connection for calls one after another", async () => {
    const fetchImpl = keepAliveFetch();
    const before = sockets.size;
    for (let i = 0; i < 5; i++) await (await fetchImpl(`${base}/echo`)).text();
    expect(sockets.size - before).toBe(1);
  });

  it("rejects like fetch on a timeout and on a refused connection", async () => {
    const fetchImpl = keepAliveFetch();
    await expect(fetchImpl(`${base}/slow`, { signal: AbortSignal.timeout(100) })).rejects.toThrow(
      expect.objectContaining({ name: "TimeoutError" }) as Error,
    );
    await expect(fetchImpl("http://127.0.0.1:9/")).rejects.toThrow("fetch failed");
  });
});

describe("keepAliveFetch with a pinned certificate", () => {
  let server: HttpsServer;
  let base: string;
  let pinned: Awaited<ReturnType<typeof testTlsCertificate>>;
  let other: Awaited<ReturnType<typeof testTlsCertificate>>;
  let received = 0;

  beforeAll(async () => {
    [pinned, other] = await Promise.all([testTlsCertificate(), testTlsCertificate()]);
    server = createHttpsServer({ key: pinned.key, cert: pinned.cert }, (req, res) => {
      received++;
      res.writeHead(req.url?.startsWith("/missing") ? 404 : 200, {
        "content-type": "application/json",
      });
      res.end('{"status":"ok"}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("talks to the pinned certificate only, and says which one answered", async () => {
    const fetchImpl = keepAliveFetch();
    const ok = await fetchImpl(`${base}/x`, { certSha256: pinned.certSha256 });
    expect([ok.status, ok.peerCertSha256]).toEqual([200, pinned.certSha256]);
    const before = received;
    const refused = await fetchImpl(`${base}/x`, { certSha256: other.certSha256 }).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(TypeError);
    expect((refused as TypeError).cause).toBeInstanceOf(CertificatePinError);
    expect(received).toBe(before);
    // Nor is a pinned call ever sent over plain http.
    await expect(
      fetchImpl(base.replace("https:", "http:"), { certSha256: pinned.certSha256 }),
    ).rejects.toThrow("https");
  });

  it("serves the agent client: answers parsed, no answer an unreachable agent", async () => {
    const client = (baseUrl: string) =>
      new AgentClient({
        baseUrl,
        nodeId: "0190a5c4-0000-7000-8000-00000000000a",
        signingKey: parseAgentCallPrivateKey(generateAgentCallKeyPair().privateKey),
        certSha256: pinned.certSha256,
        retries: 0,
        timeoutMs: 100,
        fetchImpl: keepAliveFetch(),
      });
    await expect(client(`${base}/missing-agent`).health()).rejects.toMatchObject({
      status: 404,
    });
    const unreachable = await client("https://127.0.0.1:9")
      .health()
      .catch((e: unknown) => e);
    expect(unreachable).toBeInstanceOf(AgentApiError);
    expect(unreachable).toMatchObject({ status: 0, code: "unreachable", retryable: true });
  });
});
