import { randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentProcess, startAgent } from "./agent-process.ts";
import { loadEnv } from "./env.ts";
import {
  ensureContainerTools,
  type LocalStack,
  startLocalStack,
} from "./runtimes/containerd/testing/local-stack.ts";
import { FakeControlPlane } from "./testing/fake-control-plane.ts";

// The daemon as it runs on a GPU host (THAW_AGENT_RUNTIME=containerd): one host, served at
// the root, joined with its instance type's figures; a start from the scheduler's client
// runs the real pull path and its phases reach the control plane as telemetry.

const isRoot = process.getuid?.() === 0;
if (!isRoot) console.warn("containerd host daemon test skipped: containerd needs root");

describe.skipIf(!isRoot)("agent daemon on a containerd host", () => {
  let stack: LocalStack;
  let cp: FakeControlPlane;
  let agent: AgentProcess;

  beforeAll(async () => {
    await ensureContainerTools();
    stack = await startLocalStack({ imageName: "thaw-daemon-probe" });
    cp = new FakeControlPlane();
    await cp.start();
    const state = mkdtempSync(join(tmpdir(), "thaw-agent-containerd-"));
    writeFileSync(join(state, "tokens"), "token-1\n");
    const config = loadEnv({
      THAW_CONTROL_PLANE_URL: cp.url,
      THAW_AGENT_RUNTIME: "containerd",
      THAW_AGENT_HOST_NAME: "gpu-host-1",
      THAW_AGENT_INSTANCE_TYPE: "g6e.xlarge",
      THAW_AGENT_LISTEN: "127.0.0.1:0",
      THAW_AGENT_STATE_DIR: state,
      THAW_JOIN_TOKENS_FILE: join(state, "tokens"),
      THAW_TELEMETRY_FLUSH_MS: "20",
      THAW_CONTAINERD_ADDRESS: stack.address,
      THAW_CONTAINERD_NAMESPACE: stack.namespace,
      THAW_CONTAINERD_LOG_DIR: stack.logDir,
      THAW_CONTAINERD_PLAIN_HTTP_REGISTRIES: stack.registryHost,
      THAW_AGENT_DISK_PROBE_MIB: "16",
    });
    agent = await startAgent(config, { log: pino({ level: "silent" }), heartbeatIntervalMs: 200 });
    for (let waited = 0; cp.nodes.size < 1; waited += 20) {
      if (waited > 10_000) throw new Error("the containerd host did not join");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }, 900_000);

  afterAll(async () => {
    await agent?.shutdown("test over");
    await cp?.stop();
    await stack?.stop();
  }, 120_000);

  it("joins as one host served at the root, and runs a real pull start end to end", async () => {
    const node = cp.nodeNamed("gpu-host-1");
    expect(node?.agentUrl).toBe(agent.listenUrl);
    expect(node?.agentCertSha256).toBe(agent.certSha256);
    // The disk probe ran at boot (in the state directory) and the join carried it.
    expect(node?.figures?.measuredDisk?.writeMiBps).toBeGreaterThan(0);
    expect(node?.figures?.measuredDisk?.readMiBps).toBeGreaterThan(0);
    const client = cp.agentClient("gpu-host-1", { retries: 2 });
    const inventory = await client.inventory();
    expect(inventory.node).toMatchObject({ name: "gpu-host-1", runtime: "containerd" });
    expect(inventory.gpus.total).toBe(1); // g6e.xlarge: one L40S

    const replicaId = randomUUID();
    const coldStartId = randomUUID();
    await client.startReplica({
      replicaId,
      coldStartId,
      path: "pull",
      gpus: [],
      deployment: { imageRef: stack.image.ref, imageDigest: stack.image.digest },
      readiness: {
        port: stack.image.httpPort,
        path: stack.image.readinessPath,
        timeoutSeconds: 20,
      },
    });
    for (let waited = 0; !cp.outcomes.has(coldStartId); waited += 50) {
      if (waited > 60_000) throw new Error("no outcome for the start");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(cp.outcomes.get(coldStartId)).toMatchObject({ status: "succeeded" });
    const phases = (cp.events.get(coldStartId) ?? []).map((e) => e.phase);
    expect(phases).toEqual(["pull", "create", "start", "ready"]);
    expect(cp.events.get(coldStartId)?.[0]?.bytes).toBe(stack.image.bytes);

    await expect(client.stopReplica(replicaId)).resolves.toMatchObject({ found: true });
  });
});
