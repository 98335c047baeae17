import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keepAliveFetch } from "@thaw/node-agent-client";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentProcess, startAgent } from "../agent-process.ts";
import { loadEnv } from "../env.ts";
import { FakeControlPlane } from "../testing/fake-control-plane.ts";

// The sim cloud through the agent's HTTP API, as the scheduler's sim fleet provider uses it.

const TOKEN = "sim-cloud-secret-0123456789";

describe("sim cloud", () => {
  let cp: FakeControlPlane;
  let agent: AgentProcess;
  // Over the agent's TLS, pinned to its certificate, as the scheduler's sim provider calls it.
  const pinned = keepAliveFetch();
  const call = (method: string, path: string, body?: unknown, token = TOKEN) =>
    pinned(`${agent.listenUrl}/sim-cloud/v1/instances${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      certSha256: agent.certSha256,
    });
  const launch = (instanceId: string, bootSeconds = 30) =>
    call("POST", "", {
      instanceId,
      instanceType: "g6e.xlarge",
      zone: "sim-b",
      joinToken: `thawjoin_for-${instanceId}`,
      bootSeconds,
    });
  const until = async (what: string, ok: () => boolean) => {
    for (let waited = 0; !ok(); waited += 20) {
      if (waited > 5_000) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  beforeAll(async () => {
    cp = new FakeControlPlane();
    await cp.start();
    const state = mkdtempSync(join(tmpdir(), "thaw-sim-cloud-"));
    const config = loadEnv({
      THAW_CONTROL_PLANE_URL: cp.url,
      THAW_AGENT_LISTEN: "127.0.0.1:0",
      THAW_AGENT_STATE_DIR: state,
      THAW_SIM_HOSTS: "",
      THAW_SIM_CLOUD_TOKEN: TOKEN,
      // 30 simulated seconds of boot take 30 ms here.
      THAW_SIM_TIME_FACTOR: "1000",
    });
    agent = await startAgent(config, { log: pino({ level: "silent" }), heartbeatIntervalMs: 100 });
  });
  afterAll(async () => {
    await agent?.shutdown("test over");
    await cp?.stop();
  });

  it("boots a launched host, which joins with its own token and instance id", async () => {
    const answer = await launch("sim-node-1");
    expect(answer.status).toBe(201);
    expect(await answer.json()).toMatchObject({
      instanceId: "sim-node-1",
      name: "cloud-node-1",
      state: "pending",
    });
    await until("the host to join", () => cp.nodeNamed("cloud-node-1") !== undefined);
    expect(cp.nodeNamed("cloud-node-1")).toMatchObject({
      joinToken: "thawjoin_for-sim-node-1",
      instanceId: "sim-node-1",
      zone: "sim-b",
      agentUrl: `${agent.advertiseBase}/hosts/cloud-node-1`,
    });
    const listed = (await (await call("GET", "")).json()) as { instances: { state: string }[] };
    expect(listed.instances).toEqual([
      expect.objectContaining({ instanceId: "sim-node-1", state: "running" }),
    ]);
  });

  it("simulates the data volume the provider asked for, and the host reports it as its disk", async () => {
    const answer = await call("POST", "", {
      instanceId: "sim-node-v",
      instanceType: "g6e.xlarge",
      zone: "sim-b",
      joinToken: "thawjoin_for-sim-node-v",
      bootSeconds: 30,
      dataVolume: { throughputMiBps: 1000, iops: 16000 },
    });
    expect(answer.status).toBe(201);
    await until("the host to boot", () => agent.hosts.has("cloud-node-v"));
    expect(agent.hosts.get("cloud-node-v")!.figures.measuredDisk).toMatchObject({
      readMiBps: 1000,
      writeMiBps: 1000,
    });
    // Without a volume: the instance type's default gp3 disk.
    await until("the host to boot", () => agent.hosts.has("cloud-node-1"));
    expect(agent.hosts.get("cloud-node-1")!.figures.measuredDisk).toMatchObject({
      readMiBps: 125,
      writeMiBps: 125,
    });
  });

  it("answers a repeated launch with the same instance, and boots it once", async () => {
    await launch("sim-node-2");
    const again = await launch("sim-node-2");
    expect(again.status).toBe(201);
    await until("the host to join", () => cp.nodeNamed("cloud-node-2") !== undefined);
    await new Promise((r) => setTimeout(r, 100));
    expect([...cp.nodes.values()].filter((n) => n.name === "cloud-node-2")).toHaveLength(1);
  });

  it("terminates: the host stops heartbeating and leaves the API; a second terminate finds nothing", async () => {
    await launch("sim-node-3");
    await until("the host to join", () => agent.hosts.has("cloud-node-3"));
    expect(await (await call("DELETE", "/sim-node-3")).json()).toEqual({ found: true });
    expect(agent.hosts.has("cloud-node-3")).toBe(false);
    expect(await (await call("DELETE", "/sim-node-3")).json()).toEqual({ found: false });
  });

  it("terminates a host still booting before it ever joins", async () => {
    await launch("sim-node-4", 3_600);
    expect(await (await call("DELETE", "/sim-node-4")).json()).toEqual({ found: true });
    const listed = (await (await call("GET", "")).json()) as {
      instances: { instanceId: string }[];
    };
    expect(listed.instances.map((i) => i.instanceId)).not.toContain("sim-node-4");
  });

  it("refuses a wrong token, an unknown instance type and a malformed id, naming the field", async () => {
    expect((await call("GET", "", undefined, "wrong-token-wrong-token")).status).toBe(401);
    const badType = await call("POST", "", {
      instanceId: "sim-x",
      instanceType: "g9.huge",
      zone: "a",
      joinToken: "t",
      bootSeconds: 1,
    });
    expect(badType.status).toBe(400);
    expect(await badType.json()).toMatchObject({ error: { details: { field: "instanceType" } } });
    const badId = await call("POST", "", {
      instanceId: "i-123",
      instanceType: "g6e.xlarge",
      zone: "a",
      joinToken: "t",
      bootSeconds: 1,
    });
    expect(badId.status).toBe(400);
    expect(await badId.json()).toMatchObject({ error: { details: { field: "instanceId" } } });
  });
});

describe("the sim fleet's own hosts", () => {
  it("numbers a type's hosts across its groups, each group with its disk", async () => {
    const cp = new FakeControlPlane();
    await cp.start();
    const config = loadEnv({
      THAW_CONTROL_PLANE_URL: cp.url,
      THAW_AGENT_LISTEN: "127.0.0.1:0",
      THAW_AGENT_STATE_DIR: mkdtempSync(join(tmpdir(), "thaw-sim-hosts-")),
      THAW_SIM_HOSTS: "g6e.xlarge:1:1000,g6e.xlarge:1",
    });
    const agent = await startAgent(config, { log: pino({ level: "silent" }) });
    try {
      const disks = [...agent.hosts.values()].map((h) => [
        h.name,
        h.figures.measuredDisk?.readMiBps,
      ]);
      expect(disks).toEqual([
        ["sim-g6e-xlarge-1", 1000],
        ["sim-g6e-xlarge-2", 125],
      ]);
    } finally {
      await agent.shutdown("test over");
      await cp.stop();
    }
  });
});
