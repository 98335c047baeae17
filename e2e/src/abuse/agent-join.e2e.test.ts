import { createJoinToken } from "@thaw/core";
import { G5_XLARGE_JOIN_FIGURES } from "@thaw/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "../web-server.ts";

// SSRF through agentUrl (issue 23, finding 4), against the built server: a node used to name
// any URL as its agent address, and the scheduler called it with a node bearer. Now a join
// names an IP and port (the sim agent's /hosts/<name> at most), and that IP must be the one
// the join came from (or inside THAW_AGENT_CIDRS); refused before the token is spent.

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
  const join = (joinToken: string, agentUrl: string, name = "probe") =>
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
        figures: G5_XLARGE_JOIN_FIGURES,
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
    // The agent's own address (the one it joins from) is taken, with the same token.
    const ok = await join(joinToken, "http://127.0.0.1:7070/hosts/probe-1");
    expect(ok.status, await ok.clone().text()).toBe(200);
    const node = await server.database.db.node.findFirstOrThrow();
    expect(node.agentUrl).toBe("http://127.0.0.1:7070/hosts/probe-1");
  });
});
