import { createJoinToken } from "@thaw/core";
import { G5_XLARGE_JOIN_FIGURES } from "@thaw/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "../web-server.ts";

// SSRF through agentUrl (issue 23, finding 4), against the built server: a node used to name
// any URL as its agent address, and the scheduler called it with a node bearer. Now a join
// names an IP and port (the sim agent's /hosts/<name> at most), and that IP must be the one
// the join came from (or inside THAW_AGENT_CIDRS); refused before the token is spent. And it
// is https, with the SHA-256 of the certificate the scheduler will accept there.
//
// Node takeover (finding 6): a spare join token plus an existing node's instanceId (shown as
// its name) returned that node's id and live credential and rewrote its agentUrl.

const PIN = "5".repeat(64);

describe("joining with an agent address of the tenant's choosing", () => {
  let server: WebServer;

  beforeAll(async () => {
    server = await startWebServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  const token = async () =>
    (
      await createJoinToken({
        actor: { type: "system", orgId: server.orgId },
        input: { ttlSeconds: 600 },
        db: server.database.db,
      })
    ).token;
  const join = (
    joinToken: string,
    agentUrl: string,
    name = "probe",
    extra: Record<string, string> = {},
  ) =>
    fetch(`${server.baseUrl}/api/agent/v1/join`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        joinToken,
        name,
        provider: "sim",
        runtime: "sim",
        agentVersion: "probe",
        agentUrl,
        agentCertSha256: PIN,
        figures: G5_XLARGE_JOIN_FIGURES,
        ...extra,
      }),
    });

  it("refuses the probes' addresses with 400 naming agentUrl, and keeps the token unspent", async () => {
    const joinToken = await token();
    for (const agentUrl of [
      "http://127.0.0.1:7499/admin/purge-cache?target=all&x=",
      "file:///etc/passwd",
      "http://169.254.169.254/latest/meta-data/",
      "http://[::1]:6379/",
      "http://10.20.30.40:7070",
      "http://localhost:7070",
    ]) {
      const response = await join(joinToken, agentUrl);
      const body = (await response.json()) as { error?: { details?: { field?: string } } };
      expect(response.status, agentUrl).toBe(400);
      expect(body.error?.details?.field, agentUrl).toBe("agentUrl");
    }
    expect(await server.database.db.node.count()).toBe(0);
    // Its own address, but in the clear: the scheduler calls agents over TLS only.
    const plain = await join(joinToken, "http://127.0.0.1:7070/hosts/probe-1");
    expect(plain.status).toBe(400);
    expect(await plain.json()).toMatchObject({ error: { details: { field: "agentUrl" } } });
    // The agent's own address (the one it joins from) is taken, with the same token.
    const ok = await join(joinToken, "https://127.0.0.1:7070/hosts/probe-1");
    expect(ok.status, await ok.clone().text()).toBe(200);
    const node = await server.database.db.node.findFirstOrThrow();
    expect(node.agentUrl).toBe("https://127.0.0.1:7070/hosts/probe-1");
    expect(node.agentCertSha256).toBe(PIN);
  });

  it("refuses a spare token with an existing node's instanceId: no credential, no rewrite, the token spent", async () => {
    const db = server.database.db;
    const victimUrl = "https://127.0.0.1:7443/hosts/victim";
    const first = await join(await token(), victimUrl, "victim", { instanceId: "i-0victim" });
    expect(first.status, await first.clone().text()).toBe(200);
    const victim = (await first.json()) as { nodeId: string; credential: string };
    const before = await db.node.findUniqueOrThrow({ where: { id: victim.nodeId } });

    // The attacker: a token of the same org (any admin can make one) and the victim's
    // instance id, with their own address and certificate.
    const spare = await token();
    const takeover = await fetch(`${server.baseUrl}/api/agent/v1/join`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        joinToken: spare,
        name: "attacker",
        provider: "sim",
        runtime: "sim",
        instanceId: "i-0victim",
        agentVersion: "probe",
        agentUrl: "https://127.0.0.1:7999/hosts/attacker",
        agentCertSha256: "6".repeat(64),
        figures: G5_XLARGE_JOIN_FIGURES,
      }),
    });
    const text = await takeover.text();
    expect(takeover.status, text).toBe(409);
    expect(JSON.parse(text)).toMatchObject({
      error: { code: "CONFLICT", details: { field: "instanceId" } },
    });
    expect(text).not.toContain(victim.nodeId);
    expect(text).not.toMatch(/thawnode_/);
    const after = await db.node.findUniqueOrThrow({ where: { id: victim.nodeId } });
    expect(after).toMatchObject({
      name: "victim",
      agentUrl: victimUrl,
      agentCertSha256: PIN,
      credentialHash: before.credentialHash,
    });
    // The token is spent: it cannot be tried again with another guess.
    const reuse = await join(spare, "https://127.0.0.1:7998/hosts/other", "other");
    expect(reuse.status).toBe(401);

    // Another org's instance id gets the very same answer as this org's.
    const other = await db.org.create({ data: { slug: "elsewhere", name: "Elsewhere" } });
    const theirs = await createJoinToken({
      actor: { type: "system", orgId: other.id },
      input: { ttlSeconds: 600 },
      db,
    });
    expect(
      (
        await join(theirs.token, victimUrl.replace("victim", "theirs"), "theirs", {
          instanceId: "i-0theirs",
        })
      ).status,
    ).toBe(200);
    const refusal = async (instanceId: string) => {
      const response = await join(await token(), "https://127.0.0.1:7997/hosts/x", "x", {
        instanceId,
      });
      return { status: response.status, text: (await response.text()).replace(instanceId, "<id>") };
    };
    expect(await refusal("i-0theirs")).toEqual(await refusal("i-0victim"));

    // The node itself (its credential) joins again as itself; its old credential then stops.
    const again = await join(await token(), victimUrl, "victim", {
      instanceId: "i-0victim",
      nodeCredential: victim.credential,
    });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { nodeId: string }).nodeId).toBe(victim.nodeId);
  });
});
