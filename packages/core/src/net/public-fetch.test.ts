import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { FetchRefusedError, fetchPublic, publicOnlyLookup } from "./public-fetch.ts";

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((s) => new Promise((r) => s.close(r).closeAllConnections())),
  );
});

async function serve(handler: http.RequestListener): Promise<{ host: string; seen: string[] }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url} auth=${req.headers.authorization ?? "-"}`);
    handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { host: `127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const base = { timeoutMs: 2_000, maxBodyBytes: 1_000 };

describe("fetchPublic", () => {
  it("never connects to a loopback address it was not told to trust", async () => {
    const { host, seen } = await serve((_, res) => res.end("ok"));
    const refused = await fetchPublic(`https://${host}/`, base).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(FetchRefusedError);
    expect((refused as FetchRefusedError).reason).toBe("non-public-address");
    await expect(fetchPublic(`http://${host}/`, base)).rejects.toThrow(/only https/);
    expect(seen).toEqual([]);
  });

  it("answers from a host on the operator's trusted list, over plain http", async () => {
    const { host } = await serve((_, res) => res.end("hello"));
    const answer = await fetchPublic(`http://${host}/x`, {
      ...base,
      trustedHosts: new Set([host]),
    });
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe("hello");
  });

  it("re-checks every redirect and drops credentials on the way to another host", async () => {
    const cdn = await serve((_, res) => res.end("blob"));
    const registry = await serve((_, res) => {
      res.writeHead(307, { location: `http://${cdn.host}/blob` });
      res.end();
    });
    const trustedHosts = new Set([registry.host, cdn.host]);
    const answer = await fetchPublic(`http://${registry.host}/v2/x`, {
      ...base,
      headers: { Authorization: "Bearer secret" },
      trustedHosts,
    });
    expect(answer.body.toString()).toBe("blob");
    expect(registry.seen).toEqual(["GET /v2/x auth=Bearer secret"]);
    expect(cdn.seen).toEqual(["GET /blob auth=-"]);

    const untrustedHop = await fetchPublic(`http://${registry.host}/v2/x`, {
      ...base,
      trustedHosts: new Set([registry.host]),
    }).catch((e: unknown) => e);
    expect((untrustedHop as FetchRefusedError).reason).toBe("non-public-address");
    expect(cdn.seen).toHaveLength(1);
  });

  it("refuses a body over the cap, declared or streamed", async () => {
    const declared = await serve((_, res) => res.end("x".repeat(2_000)));
    const streamed = await serve((_, res) => {
      res.writeHead(200);
      for (let i = 0; i < 20; i++) res.write("x".repeat(100));
      res.end();
    });
    for (const { host } of [declared, streamed]) {
      const refused = await fetchPublic(`http://${host}/`, {
        ...base,
        trustedHosts: new Set([host]),
      }).catch((e: unknown) => e);
      expect((refused as FetchRefusedError).reason).toBe("too-large");
    }
  });

  it("gives up on a host that never answers, saying how long it waited", async () => {
    const { host } = await serve(() => undefined);
    const refused = await fetchPublic(`http://${host}/`, {
      ...base,
      timeoutMs: 300,
      trustedHosts: new Set([host]),
    }).catch((e: unknown) => e);
    expect((refused as FetchRefusedError).reason).toBe("timeout");
    expect((refused as Error).message).toMatch(/did not answer within 0.3 s/);
  });
});

describe("publicOnlyLookup", () => {
  const lookupThrough = (addresses: string[]) =>
    new Promise<{ error: Error | null; address: unknown }>((resolve) =>
      publicOnlyLookup((_host, _options, callback) =>
        callback(
          null,
          addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })),
        ),
      )("registry.example.com", { family: 0 }, (error, address) => resolve({ error, address })),
    );

  it("refuses a public name that resolves to a private or metadata address (rebinding)", async () => {
    for (const address of ["10.0.0.5", "169.254.169.254", "127.0.0.1", "::1", "fd00::1"]) {
      const { error } = await lookupThrough(["93.184.216.34", address]);
      expect(error).toBeInstanceOf(FetchRefusedError);
      expect(error?.message).toContain(address);
    }
  });

  it("passes a name that resolves to public addresses only", async () => {
    const { error, address } = await lookupThrough(["93.184.216.34"]);
    expect(error).toBeNull();
    expect(address).toBe("93.184.216.34");
  });
});
