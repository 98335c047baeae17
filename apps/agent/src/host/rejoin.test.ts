import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { startAgent } from "../agent-process.ts";
import { loadEnv } from "../env.ts";
import { FakeControlPlane } from "../testing/fake-control-plane.ts";

// A credential stored by an older agent (no scheduler key) or joined with another certificate
// leaves the scheduler unable to call the host: it joins again, proving with that credential
// that it is the node, and sends its certificate's SHA-256.

describe("a stored credential the scheduler could not use", () => {
  const cp = new FakeControlPlane();
  afterAll(() => cp.stop());

  it("joins again with it as proof, pinning the certificate it serves now", async () => {
    await cp.start();
    const state = mkdtempSync(join(tmpdir(), "thaw-agent-rejoin-"));
    const stale = "thawnode_0123456789ab_an-older-agents-credential-xxxx";
    writeFileSync(
      join(state, "credentials.json"),
      JSON.stringify({
        "old-g5-xlarge-1": { nodeId: "0190a5c4-0000-7000-8000-00000000000b", credential: stale },
      }),
    );
    writeFileSync(join(state, "tokens"), "token-0\n");
    const agent = await startAgent(
      loadEnv({
        THAW_CONTROL_PLANE_URL: cp.url,
        THAW_AGENT_LISTEN: "127.0.0.1:0",
        THAW_AGENT_STATE_DIR: state,
        THAW_JOIN_TOKENS_FILE: join(state, "tokens"),
        THAW_SIM_HOSTS: "g5.xlarge:1",
        THAW_SIM_HOST_PREFIX: "old",
      }),
      { log: pino({ level: "silent" }), heartbeatIntervalMs: 100 },
    );
    try {
      await expect.poll(() => cp.nodeNamed("old-g5-xlarge-1"), { timeout: 5_000 }).toBeDefined();
      const node = cp.nodeNamed("old-g5-xlarge-1")!;
      expect(node.presentedCredential).toBe(stale);
      expect(node.agentCertSha256).toBe(agent.certSha256);
      const stored = JSON.parse(readFileSync(join(state, "credentials.json"), "utf8")) as Record<
        string,
        { credential: string; certSha256?: string; agentCallPublicKey?: string }
      >;
      expect(stored["old-g5-xlarge-1"]).toEqual({
        nodeId: node.nodeId,
        credential: node.credential,
        certSha256: agent.certSha256,
        agentCallPublicKey: cp.callKeys.publicKey,
      });
      // And the scheduler's calls now get through.
      expect((await cp.agentClient("old-g5-xlarge-1").inventory()).node.nodeId).toBe(node.nodeId);
    } finally {
      await agent.shutdown("test over");
    }
  });
});
