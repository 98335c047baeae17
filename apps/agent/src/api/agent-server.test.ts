import { randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Phase } from "@thaw/core/vocabulary";
import { AgentApiError, AgentClient, type StartReplicaRequestInput } from "@thaw/node-agent-client";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentProcess, startAgent } from "../agent-process.ts";
import { loadEnv } from "../env.ts";
import { FakeControlPlane } from "../testing/fake-control-plane.ts";

const log = pino({ level: "silent" });

interface Fleet {
  cp: FakeControlPlane;
  agent: AgentProcess;
  client: (host: string) => AgentClient;
  credential: (host: string) => string;
  baseUrl: (host: string) => string;
}

async function startFleet(env: Record<string, string>): Promise<Fleet> {
  const cp = new FakeControlPlane();
  await cp.start();
  const state = mkdtempSync(join(tmpdir(), "thaw-agent-api-"));
  const hosts = (env.THAW_SIM_HOSTS ?? "")
    .split(",")
    .reduce((n, part) => n + Number(part.split(":")[1]), 0);
  writeFileSync(
    join(state, "tokens"),
    Array.from({ length: hosts }, (_, i) => `token-${i}`).join("\n"),
  );
  const config = loadEnv({
    THAW_CONTROL_PLANE_URL: cp.url,
    THAW_AGENT_LISTEN: "127.0.0.1:0",
    THAW_AGENT_STATE_DIR: state,
    THAW_JOIN_TOKENS_FILE: join(state, "tokens"),
    THAW_TELEMETRY_FLUSH_MS: "20",
    ...env,
  });
  const agent = await startAgent(config, { log, heartbeatIntervalMs: 200 });
  for (let waited = 0; cp.nodes.size < hosts; waited += 20) {
    if (waited > 5_000) throw new Error(`only ${cp.nodes.size} of ${hosts} hosts joined`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const node = (host: string) => {
    const found = cp.nodeNamed(host);
    if (!found) throw new Error(`${host} did not join`);
    return found;
  };
  return {
    cp,
    agent,
    credential: (host) => node(host).credential,
    baseUrl: (host) => node(host).agentUrl ?? "",
    client: (host) =>
      new AgentClient({
        baseUrl: node(host).agentUrl ?? "",
        credential: node(host).credential,
        retries: 0,
      }),
  };
}

const G5 = "api-g5-xlarge-1";
const P4D = "api-p4d-24xlarge-1";

const startRequest = (input: Partial<StartReplicaRequestInput> = {}): StartReplicaRequestInput => ({
  replicaId: randomUUID(),
  coldStartId: randomUUID(),
  path: "pull",
  gpus: [0],
  deployment: {
    deploymentId: randomUUID(),
    imageRef: "ghcr.io/thaw/llama:v1",
    estargzImageRef: "ghcr.io/thaw/llama:v1-esgz",
  },
  readiness: { port: 8000, timeoutSeconds: 600 },
  ...input,
});

async function rejection(promise: Promise<unknown>): Promise<AgentApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof AgentApiError))
    throw new Error(`expected an AgentApiError, got ${String(error)}`);
  return error;
}

describe("agent HTTP API (sim fleet)", () => {
  let fleet: Fleet;

  beforeAll(async () => {
    fleet = await startFleet({
      THAW_SIM_HOSTS: "g5.xlarge:1,p4d.24xlarge:1",
      THAW_SIM_HOST_PREFIX: "api",
      THAW_SIM_TIME_FACTOR: "100000",
      THAW_SIM_ESTARGZ: "false",
    });
  });
  afterAll(async () => {
    await fleet?.agent.shutdown("test over");
    await fleet?.cp.stop();
  });

  it("joins every host with its own base URL on the one port", () => {
    expect(fleet.baseUrl(G5)).toBe(`${fleet.agent.listenUrl}/hosts/${G5}`);
    expect(fleet.baseUrl(P4D)).toBe(`${fleet.agent.listenUrl}/hosts/${P4D}`);
  });

  it("acknowledges a start with 202 at once, runs it, and streams its phases in order", async () => {
    const client = fleet.client(G5);
    const request = startRequest();
    const answer = await client.startReplica(request);
    expect(answer).toMatchObject({
      replicaId: request.replicaId,
      coldStartId: request.coldStartId,
      path: "pull",
    });
    await expect
      .poll(() => fleet.cp.outcomes.get(request.coldStartId)?.status, { timeout: 5_000 })
      .toBe("succeeded");
    const events = fleet.cp.events.get(request.coldStartId) ?? [];
    expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
    const indexes = events.map((e) => Phase.options.indexOf(e.phase));
    expect(indexes).toEqual([...indexes].sort((a, b) => a - b));
    expect(events.at(-1)?.phase).toBe("ready");
    expect(events[0]).toMatchObject({ phase: "pull", bytes: 15_500_000_000 });

    const inventory = await client.inventory();
    expect(inventory.gpus).toMatchObject({
      total: 1,
      used: 1,
      held: [{ index: 0, replicaId: request.replicaId }],
    });
    expect(inventory.images).toHaveLength(1);
    expect(inventory.replicas).toEqual([
      expect.objectContaining({
        replicaId: request.replicaId,
        state: "running",
        coldStartId: request.coldStartId,
      }),
    ]);
    await client.stopReplica(request.replicaId);
  });

  it("answers a second start of the same replica the same, without a second run", async () => {
    const client = fleet.client(P4D);
    const request = startRequest();
    const first = await client.startReplica(request);
    const second = await client.startReplica(request);
    expect(second).toEqual(first);
    await expect
      .poll(() => fleet.cp.outcomes.has(request.coldStartId), { timeout: 5_000 })
      .toBe(true);
    const third = await client.startReplica(request);
    expect(third).toEqual(first);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const events = fleet.cp.events.get(request.coldStartId) ?? [];
    expect(events.filter((e) => e.phase === "ready")).toHaveLength(1);
    expect(fleet.cp.counts.duplicates).toBe(0);
    // A different cold start for a replica that is running is a conflict, not a restart.
    const conflict = await rejection(
      client.startReplica({ ...request, coldStartId: randomUUID() }),
    );
    expect(conflict).toMatchObject({ status: 409, code: "replica_exists", field: "replicaId" });
    await client.stopReplica(request.replicaId);
  });

  it("refuses with 409 and a reason what the host cannot serve", async () => {
    const client = fleet.client(G5);
    const lazy = await rejection(client.startReplica(startRequest({ path: "lazy" })));
    expect(lazy).toMatchObject({ status: 409, code: "path_unsupported", field: "path" });
    expect(lazy.message).toMatch(/stargz-snapshotter/);

    const warm = await rejection(
      client.startReplica(startRequest({ path: "warm", warmReplicaId: randomUUID() })),
    );
    expect(warm).toMatchObject({
      status: 409,
      code: "warm_replica_missing",
      field: "warmReplicaId",
    });

    const restore = await rejection(
      client.startReplica(
        startRequest({
          path: "restore",
          deployment: {
            imageRef: "ghcr.io/thaw/llama:v1",
            snapshot: {
              snapshotId: randomUUID(),
              checkpointRef: `registry.internal/snap@sha256:${"e".repeat(64)}`,
              sleepLevel: 2,
            },
            simulation: {
              layers: [{ bytes: 1_000_000, compression: "gzip-6", content: "code" }],
              engine: {
                weightsBytes: 0,
                loader: "sequential",
                loaderConcurrency: 1,
                initSeconds: 1,
                compileSeconds: 0,
                graphCaptureSeconds: 0,
                warmupSeconds: 0,
              },
              snapshot: { driverVersion: "535.104.05" },
            },
          },
        }),
      ),
    );
    expect(restore).toMatchObject({
      status: 409,
      code: "path_infeasible",
      field: "deployment.snapshot",
    });
    expect(restore.message).toMatch(/driver 535\.104\.05/);

    const noSuchGpu = await rejection(client.startReplica(startRequest({ gpus: [3] })));
    expect(noSuchGpu).toMatchObject({ status: 409, code: "gpu_unavailable", field: "gpus" });

    const holder = startRequest();
    await client.startReplica(holder);
    const busy = await rejection(client.startReplica(startRequest()));
    expect(busy).toMatchObject({ status: 409, code: "gpu_busy", field: "gpus" });
    await client.stopReplica(holder.replicaId);
  });

  it("parks a ready replica and hands it over warm", async () => {
    const client = fleet.client(G5);
    const request = startRequest();
    await client.startReplica(request);
    await expect
      .poll(() => fleet.cp.outcomes.has(request.coldStartId), { timeout: 5_000 })
      .toBe(true);
    expect(await client.parkReplica({ replicaId: request.replicaId })).toEqual({
      replicaId: request.replicaId,
      state: "warm",
    });
    expect((await client.inventory()).warmReplicaIds).toEqual([request.replicaId]);
    const warm = startRequest({
      path: "warm",
      warmReplicaId: request.replicaId,
      gpus: [],
      deployment: request.deployment,
    });
    await client.startReplica(warm);
    await expect
      .poll(() => fleet.cp.outcomes.get(warm.coldStartId)?.status, { timeout: 5_000 })
      .toBe("succeeded");
    expect(fleet.cp.events.get(warm.coldStartId)?.map((e) => e.phase)).toEqual([
      "handover",
      "ready",
    ]);
    const inventory = await client.inventory();
    expect(inventory.gpus.held).toEqual([{ index: 0, replicaId: warm.replicaId }]);
    expect(await client.stopReplica(warm.replicaId)).toMatchObject({ found: true });
    expect(await client.stopReplica(warm.replicaId)).toMatchObject({ found: false });
    expect((await client.inventory()).gpus.used).toBe(0);
  });

  it("captures a snapshot that a later restore finds local", async () => {
    const client = fleet.client(P4D);
    const request = startRequest();
    await client.startReplica(request);
    await expect
      .poll(() => fleet.cp.outcomes.has(request.coldStartId), { timeout: 5_000 })
      .toBe(true);
    const snapshotId = randomUUID();
    const capture = {
      replicaId: request.replicaId,
      snapshotId,
      checkpointRef: "registry.internal/snap:9",
      sleepLevel: 2 as const,
    };
    const captured = await client.captureSnapshot(capture);
    expect(captured).toMatchObject({ snapshotId, pushed: true });
    expect(await client.captureSnapshot(capture)).toEqual(captured);
    expect((await client.inventory()).snapshotIds).toContain(snapshotId);
    const restore = startRequest({
      path: "restore",
      deployment: {
        imageRef: "ghcr.io/thaw/llama:v1",
        snapshot: {
          snapshotId,
          checkpointRef: `registry.internal/snap@${captured.digest}`,
          sleepLevel: 2,
        },
      },
    });
    await client.startReplica(restore);
    await expect
      .poll(() => fleet.cp.outcomes.get(restore.coldStartId)?.status, { timeout: 5_000 })
      .toBe("succeeded");
    expect(fleet.cp.events.get(restore.coldStartId)?.map((e) => e.phase)).toEqual([
      "restore",
      "load_weights",
      "warmup",
      "ready",
    ]);
    await client.stopReplica(restore.replicaId);
  });

  describe("bad input: 4xx naming the field, never a 500", () => {
    const post = (host: string, path: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${fleet.baseUrl(host)}${path}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${fleet.credential(host)}`,
          "content-type": "application/json",
          ...headers,
        },
        body,
      });
    const errorOf = async (response: Response) =>
      (
        (await response.json()) as {
          error: { code: string; message: string; details?: { field?: string } };
        }
      ).error;

    it.each([
      [
        "a bad image reference",
        { ...startRequest(), deployment: { imageRef: "--plain-http" } },
        "deployment.imageRef",
      ],
      ["a missing cold start", { ...startRequest(), coldStartId: undefined }, "coldStartId"],
      ["an unknown field", { ...startRequest(), shell: "rm -rf /" }, "shell"],
      [
        "a bad simulation layer",
        {
          ...startRequest(),
          deployment: { imageRef: "a/b:c", simulation: { layers: [{ bytes: -1 }] } },
        },
        "deployment.simulation.layers.0.bytes",
      ],
      ["an unknown path", { ...startRequest(), path: "teleport" }, "path"],
    ])("400 for %s", async (_name, body, field) => {
      const response = await post(G5, "/v1/replicas", JSON.stringify(body));
      expect(response.status).toBe(400);
      const error = await errorOf(response);
      expect(error.code).toBe("invalid_request");
      expect(error.details?.field).toBe(field);
      expect(error.message).toMatch(new RegExp(`^${field.replace(/\./g, "\\.")}: `));
    });

    it("400 for JSON that does not parse, or no body", async () => {
      const broken = await post(G5, "/v1/replicas", '{"replicaId": ');
      expect(broken.status).toBe(400);
      expect(await errorOf(broken)).toMatchObject({
        code: "invalid_json",
        details: { field: "body" },
      });
      const empty = await post(G5, "/v1/replicas", "");
      expect(empty.status).toBe(400);
      expect(await errorOf(empty)).toMatchObject({ details: { field: "body" } });
    });

    it("415 for a body that is not JSON, 413 above 1 MiB", async () => {
      const text = await post(G5, "/v1/replicas", "replicaId=1", { "content-type": "text/plain" });
      expect(text.status).toBe(415);
      const big = await post(G5, "/v1/replicas", JSON.stringify({ pad: "x".repeat(1024 * 1024) }));
      expect(big.status).toBe(413);
      expect(await errorOf(big)).toMatchObject({
        code: "body_too_large",
        details: { field: "body" },
      });
    });

    it("400 for a replica id in the URL that is not a UUID, 404 for an unknown one", async () => {
      const bad = await post(G5, "/v1/replicas/not-a-uuid/park", "{}");
      expect(bad.status).toBe(400);
      expect((await errorOf(bad)).details?.field).toBe("replicaId");
      const unknown = await post(G5, `/v1/replicas/${randomUUID()}/park`, "{}");
      expect(unknown.status).toBe(404);
      expect((await errorOf(unknown)).code).toBe("replica_not_found");
    });

    it("400 for a capture without its snapshot id", async () => {
      const response = await post(
        G5,
        "/v1/snapshots",
        JSON.stringify({ replicaId: randomUUID(), checkpointRef: "a/b:c", sleepLevel: 2 }),
      );
      expect(response.status).toBe(400);
      expect((await errorOf(response)).details?.field).toBe("snapshotId");
    });

    it("404 for an unknown host or route, 405 for a wrong method, and /v1 needs a host when there are several", async () => {
      const unknown = await fetch(`${fleet.agent.listenUrl}/hosts/nope/v1/inventory`);
      expect(unknown.status).toBe(404);
      expect((await errorOf(unknown)).details?.field).toBe("host");
      const route = await fetch(`${fleet.baseUrl(G5)}/v1/nothing`);
      expect(route.status).toBe(404);
      const method = await fetch(`${fleet.baseUrl(G5)}/v1/inventory`, { method: "PUT" });
      expect(method.status).toBe(405);
      expect(method.headers.get("allow")).toBe("GET");
      const bare = await fetch(`${fleet.agent.listenUrl}/v1/inventory`);
      expect(bare.status).toBe(404);
      expect((await errorOf(bare)).code).toBe("host_required");
    });
  });

  it("401 for a missing, wrong or another node's credential", async () => {
    const inventory = (credential?: string) =>
      fetch(
        `${fleet.baseUrl(G5)}/v1/inventory`,
        credential ? { headers: { authorization: `Bearer ${credential}` } } : {},
      );
    expect((await inventory()).status).toBe(401);
    expect((await inventory("thawnode_wrong")).status).toBe(401);
    const other = await inventory(fleet.credential(P4D));
    expect(other.status).toBe(401);
    expect(other.headers.get("www-authenticate")).toMatch(/Bearer/);
    const wrongClient = new AgentClient({
      baseUrl: fleet.baseUrl(G5),
      credential: "nope",
      retries: 0,
    });
    expect(await rejection(wrongClient.startReplica(startRequest()))).toMatchObject({
      status: 401,
      code: "unauthorized",
    });
  });

  it("serves health and Prometheus metrics without a credential", async () => {
    expect(await (await fetch(`${fleet.agent.listenUrl}/healthz`)).json()).toEqual({
      status: "ok",
      hosts: 2,
    });
    expect(await fleet.client(G5).health()).toEqual({ status: "ok", joined: true });
    const response = await fetch(`${fleet.agent.listenUrl}/metrics`);
    expect(response.headers.get("content-type")).toMatch(/text\/plain/);
    const text = await response.text();
    expect(text).toMatch(/^thaw_agent_starts_total\{path="pull",outcome="succeeded"\} [1-9]/m);
    expect(text).toMatch(/^thaw_agent_starts_total\{path="lazy",outcome="refused"\} 1/m);
    expect(text).toMatch(/^thaw_agent_heartbeats_total\{result="sent"\} [1-9]/m);
    expect(text).toMatch(
      /^thaw_agent_phase_duration_seconds_count\{path="pull",phase="pull"\} [1-9]/m,
    );
    expect(text).toMatch(/^thaw_agent_telemetry_queue_depth \d+/m);
    expect(text).toMatch(/^thaw_agent_telemetry_spool_bytes \d+/m);
    expect(text).toMatch(
      /^thaw_agent_http_requests_total\{route="POST \/v1\/replicas",status="202"\} [1-9]/m,
    );
  });
});

describe("agent shutdown", () => {
  it("refuses new starts with 503, hands back a start still running, and flushes its telemetry", async () => {
    const fleet = await startFleet({
      THAW_SIM_HOSTS: "g5.xlarge:1",
      THAW_SIM_HOST_PREFIX: "bye",
      THAW_SIM_TIME_FACTOR: "1",
      THAW_AGENT_SHUTDOWN_GRACE_SECONDS: "0.2",
    });
    const client = fleet.client("bye-g5-xlarge-1");
    const slow = startRequest();
    await client.startReplica(slow);
    const stopping = fleet.agent.shutdown("test");
    const refused = await rejection(client.startReplica(startRequest()));
    expect(refused).toMatchObject({ status: 503, code: "shutting_down", retryable: false });
    expect(await client.health()).toMatchObject({ status: "draining" });
    await stopping;
    const outcome = fleet.cp.outcomes.get(slow.coldStartId);
    expect(outcome).toMatchObject({ status: "failed", failedPhase: "pull" });
    expect(outcome?.error).toMatch(/agent shutting down/);
    expect(fleet.cp.events.get(slow.coldStartId)?.[0]).toMatchObject({
      phase: "pull",
      attributes: { failed: true },
    });
    await fleet.cp.stop();
  });

  it("with only one host, serves it at /v1 too", async () => {
    const fleet = await startFleet({
      THAW_SIM_HOSTS: "g5.xlarge:1",
      THAW_SIM_HOST_PREFIX: "solo",
      THAW_SIM_TIME_FACTOR: "100000",
    });
    const direct = new AgentClient({
      baseUrl: fleet.agent.listenUrl,
      credential: fleet.credential("solo-g5-xlarge-1"),
      retries: 0,
    });
    expect((await direct.inventory()).node.name).toBe("solo-g5-xlarge-1");
    await fleet.agent.shutdown("test");
    await fleet.cp.stop();
  });
});
