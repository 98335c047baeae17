import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Phase } from "@thaw/core/vocabulary";
import {
  AgentApiError,
  type AgentClient,
  type PinnedResponse,
  generateAgentCallKeyPair,
  keepAliveFetch,
  parseAgentCallPrivateKey,
  signAgentCall,
} from "@thaw/node-agent-client";
import { type StartReplicaRequestInput } from "@thaw/protocol";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentProcess, startAgent } from "../agent-process.ts";
import { loadEnv } from "../env.ts";
import { FakeControlPlane } from "../testing/fake-control-plane.ts";

const log = pino({ level: "silent" });

interface Fleet {
  cp: FakeControlPlane;
  agent: AgentProcess;
  state: string;
  client: (host: string) => AgentClient;
  credential: (host: string) => string;
  nodeId: (host: string) => string;
  baseUrl: (host: string) => string;
  /**
   * A request to the agent over TLS pinned to its certificate, signed like the scheduler's
   * for `signFor`'s node (by default the host the URL names; null: unsigned), with the
   * control plane's key unless another is given.
   */
  call: (
    url: string,
    init?: RequestInit & {
      body?: string;
      signFor?: string | null;
      key?: string;
      now?: number;
    },
  ) => Promise<PinnedResponse>;
}

const pinnedFetch = keepAliveFetch();

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
    state,
    credential: (host) => node(host).credential,
    nodeId: (host) => node(host).nodeId,
    baseUrl: (host) => node(host).agentUrl ?? "",
    client: (host) => cp.agentClient(host),
    call: (url, init = {}) => {
      const { signFor, key, now, ...rest } = init;
      const target = new URL(url);
      const host = /^\/hosts\/([^/]+)/.exec(target.pathname)?.[1];
      const nodeId =
        signFor === null ? undefined : (signFor ?? (host ? node(host).nodeId : undefined));
      const headers = new Headers(rest.headers);
      if (nodeId)
        headers.set(
          "authorization",
          signAgentCall(
            parseAgentCallPrivateKey(key ?? cp.callKeys.privateKey),
            {
              nodeId,
              method: rest.method ?? "GET",
              path: `${target.pathname}${target.search}`,
              body: rest.body ?? "",
            },
            now,
          ),
        );
      return pinnedFetch(url, { ...rest, headers, certSha256: agent.certSha256 });
    },
  };
}

const G5 = "api-g5-xlarge-1";
const METRICS_TOKEN = "metrics-token-for-the-test";
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
      THAW_AGENT_METRICS_TOKEN: METRICS_TOKEN,
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

  it("puts a replica to sleep, lends its GPU to another, and wakes it on that GPU once free", async () => {
    const client = fleet.client(G5);
    const request = startRequest();
    await client.startReplica(request);
    await expect
      .poll(() => fleet.cp.outcomes.has(request.coldStartId), { timeout: 5_000 })
      .toBe(true);
    const sleep = {
      replicaId: request.replicaId,
      gpus: "release" as const,
      sleepLevel: 1 as const,
      engineSleep: { path: "/sleep?level=1" },
      engineWake: { path: "/wake_up" },
    };
    expect(await client.parkReplica(sleep)).toEqual({
      replicaId: request.replicaId,
      state: "sleeping",
    });
    // Resent: the same answer, nothing done twice.
    expect(await client.parkReplica(sleep)).toMatchObject({ state: "sleeping" });
    let inventory = await client.inventory();
    expect(inventory.gpus.held).toEqual([]);
    expect(inventory.replicas).toContainEqual(
      expect.objectContaining({ replicaId: request.replicaId, state: "sleeping", gpus: [0] }),
    );
    // Its GPU is free for another replica meanwhile; the wake must wait for it.
    const borrower = startRequest();
    await client.startReplica(borrower);
    const wake = startRequest({
      path: "wake",
      sleepingReplicaId: request.replicaId,
      gpus: [],
      deployment: request.deployment,
    });
    const busy = await rejection(client.startReplica(wake));
    expect(busy).toMatchObject({ status: 409, code: "gpu_busy", field: "gpus" });
    const otherGpu = await rejection(client.startReplica({ ...wake, gpus: [1] }));
    expect(otherGpu).toMatchObject({ status: 409, code: "gpu_mismatch", field: "gpus" });
    const otherDeployment = await rejection(
      client.startReplica({ ...wake, deployment: { imageRef: "ghcr.io/thaw/other:v1" } }),
    );
    expect(otherDeployment).toMatchObject({ code: "sleeping_replica_mismatch" });
    await client.stopReplica(borrower.replicaId);

    await client.startReplica(wake);
    await expect
      .poll(() => fleet.cp.outcomes.get(wake.coldStartId)?.status, { timeout: 5_000 })
      .toBe("succeeded");
    expect(fleet.cp.events.get(wake.coldStartId)?.map((e) => e.phase)).toEqual([
      "load_weights",
      "warmup",
      "ready",
    ]);
    inventory = await client.inventory();
    expect(inventory.gpus.held).toEqual([{ index: 0, replicaId: wake.replicaId }]);
    const missing = await rejection(
      client.startReplica(
        startRequest({ ...wake, replicaId: randomUUID(), coldStartId: randomUUID() }),
      ),
    );
    expect(missing).toMatchObject({ code: "sleeping_replica_missing", field: "sleepingReplicaId" });
    await client.stopReplica(wake.replicaId);
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

  it("captures the kernel cache a start was told to after its outcome, and a start elsewhere fetches it", async () => {
    const deployment = {
      deploymentId: randomUUID(),
      imageRef: "ghcr.io/thaw/llama:v1",
    };
    const kernelCacheId = randomUUID();
    const outcomeFirst: boolean[] = [];
    fleet.cp.onKernelCache = (report) =>
      outcomeFirst.push(fleet.cp.outcomes.has(report.coldStartId));
    const capturing = startRequest({
      deployment,
      kernelCache: {
        capture: { kernelCacheId, ref: "registry.internal/kernel-caches:llama-a10g" },
      },
    });
    await fleet.client(G5).startReplica(capturing);
    await expect
      .poll(() => fleet.cp.kernelCaches.get(capturing.coldStartId), { timeout: 5_000 })
      .toMatchObject({ kernelCacheId, bytes: 500_000_000 });
    fleet.cp.onKernelCache = undefined;
    // Reported after the start's outcome, never in its place.
    expect(outcomeFirst).toEqual([true]);
    expect(fleet.cp.outcomes.get(capturing.coldStartId)?.status).toBe("succeeded");
    const { digest } = fleet.cp.kernelCaches.get(capturing.coldStartId)!;
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);

    // Another host of the fleet has no caches of its own: it fetches the stored one first.
    const fetching = startRequest({
      deployment,
      kernelCache: {
        fetch: {
          kernelCacheId,
          ref: `registry.internal/kernel-caches@${digest}`,
          bytes: 500_000_000,
        },
      },
    });
    await fleet.client(P4D).startReplica(fetching);
    await expect
      .poll(() => fleet.cp.outcomes.get(fetching.coldStartId)?.status, { timeout: 5_000 })
      .toBe("succeeded");
    const phases = fleet.cp.events.get(fetching.coldStartId)?.map((e) => e.phase) ?? [];
    expect(phases.indexOf("fetch_kernel_cache")).toBe(phases.indexOf("compile") - 1);
    expect(fleet.cp.kernelCaches.has(fetching.coldStartId)).toBe(false);
    await fleet.client(G5).stopReplica(capturing.replicaId);
    await fleet.client(P4D).stopReplica(fetching.replicaId);
  });

  describe("bad input: 4xx naming the field, never a 500", () => {
    const post = (host: string, path: string, body: string, headers: Record<string, string> = {}) =>
      fleet.call(`${fleet.baseUrl(host)}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
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

    it("404 for an unknown route and 405 for a wrong method, once the call is the scheduler's", async () => {
      const route = await fleet.call(`${fleet.baseUrl(G5)}/v1/nothing`);
      expect(route.status).toBe(404);
      expect((await errorOf(route)).message).not.toContain(G5);
      const method = await fleet.call(`${fleet.baseUrl(G5)}/v1/inventory`, { method: "PUT" });
      expect(method.status).toBe(405);
      expect(method.headers.get("allow")).toBe("GET");
    });
  });

  describe("only calls the scheduler signed for this host's node get in", () => {
    const inventoryUrl = () => `${fleet.baseUrl(G5)}/v1/inventory`;
    const refusal = async (response: PinnedResponse) => ({
      status: response.status,
      body: await response.text(),
    });

    it("refuses an unsigned call, and the node's own credential (agent → control plane only)", async () => {
      const unsigned = await refusal(await fleet.call(inventoryUrl(), { signFor: null }));
      expect(unsigned.status).toBe(401);
      const ownBearer = await fleet.call(inventoryUrl(), {
        signFor: null,
        headers: { authorization: `Bearer ${fleet.credential(G5)}` },
      });
      expect(ownBearer.headers.get("www-authenticate")).toBe("ThawAgentCall");
      expect(await refusal(ownBearer)).toEqual(unsigned);
      const otherBearer = await fleet.call(inventoryUrl(), {
        signFor: null,
        headers: { authorization: `Bearer ${fleet.credential(P4D)}` },
      });
      expect(await refusal(otherBearer)).toEqual(unsigned);
    });

    it("refuses a stale or future timestamp, another key, another node, a changed body, a replay", async () => {
      const unsigned = await refusal(await fleet.call(inventoryUrl(), { signFor: null }));
      const refused = async (init: Parameters<Fleet["call"]>[1], url = inventoryUrl()) =>
        expect(await refusal(await fleet.call(url, init))).toEqual(unsigned);
      await refused({ now: Date.now() - 61_000 });
      await refused({ now: Date.now() + 61_000 });
      await refused({ key: generateAgentCallKeyPair().privateKey });
      // Signed for P4D's node, sent to G5: no other agent (or host) takes a node's call.
      await refused({ signFor: fleet.nodeId(P4D) });

      // A signature over one body does not carry another.
      const request = startRequest();
      const header = signAgentCall(parseAgentCallPrivateKey(fleet.cp.callKeys.privateKey), {
        nodeId: fleet.nodeId(G5),
        method: "POST",
        path: new URL(`${fleet.baseUrl(G5)}/v1/replicas`).pathname,
        body: JSON.stringify(request),
      });
      const send = (body: string) =>
        pinnedFetch(`${fleet.baseUrl(G5)}/v1/replicas`, {
          method: "POST",
          headers: { authorization: header, "content-type": "application/json" },
          body,
          certSha256: fleet.agent.certSha256,
        });
      const tampered = await send(JSON.stringify({ ...request, gpus: [0], path: "lazy" }));
      expect(await refusal(tampered)).toEqual(unsigned);
      // The genuine call once; the same bytes again are a replay.
      expect((await send(JSON.stringify(request))).status).toBe(202);
      expect(await refusal(await send(JSON.stringify(request)))).toEqual(unsigned);
      await fleet.client(G5).stopReplica(request.replicaId);
    });

    it("answers an unknown host, and a bare /v1 with several hosts, exactly like a bad signature", async () => {
      const unsigned = await refusal(await fleet.call(inventoryUrl(), { signFor: null }));
      for (const url of [
        `${fleet.agent.listenUrl}/hosts/nope/v1/inventory`,
        `${fleet.agent.listenUrl}/v1/inventory`,
      ]) {
        const response = await fleet.call(url, { signFor: fleet.nodeId(G5) });
        expect(await refusal(response)).toEqual(unsigned);
      }
      expect(unsigned.body).not.toMatch(new RegExp(`${G5}|${P4D}|nope|hosts? `));
    });

    it("joined with its certificate's SHA-256, and a client pinned to another sends nothing", async () => {
      expect(fleet.cp.nodeNamed(G5)?.agentCertSha256).toBe(fleet.agent.certSha256);
      const before = fleet.agent.metrics.httpRequests;
      const count = async () => (await before.get()).values.reduce((n, v) => n + v.value, 0);
      const seen = await count();
      const impostor = fleet.cp.agentClient(G5, { certSha256: "0".repeat(64) });
      expect(await rejection(impostor.inventory())).toMatchObject({
        status: 0,
        code: "certificate_mismatch",
      });
      expect(await count()).toBe(seen);
    });
  });

  it("fetches a new credential when its heartbeat says the operator rotated it", async () => {
    const node = fleet.cp.nodeNamed(P4D)!;
    const before = node.credential;
    node.rotate = true;
    await expect
      .poll(() => node.credential !== before && !node.rotate, { timeout: 5_000 })
      .toBe(true);
    const stored = JSON.parse(
      readFileSync(join(fleet.state, "credentials.json"), "utf8"),
    ) as Record<string, { credential: string }>;
    expect(stored[P4D]?.credential).toBe(node.credential);
    expect(node.pendingCredential).toBeUndefined();
  });

  it("serves bare health to anyone, and Prometheus metrics only with its token", async () => {
    const health = await fleet.call(`${fleet.agent.listenUrl}/healthz`, { signFor: null });
    expect(await health.json()).toEqual({ status: "ok" });
    expect(await fleet.client(G5).health()).toEqual({ status: "ok" });
    const metrics = (token?: string) =>
      fleet.call(`${fleet.agent.listenUrl}/metrics`, {
        signFor: null,
        ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
      });
    expect((await metrics()).status).toBe(401);
    expect((await metrics("not-the-metrics-token")).status).toBe(401);
    expect((await metrics(fleet.credential(G5))).status).toBe(401);
    const response = await metrics(METRICS_TOKEN);
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
    const direct = fleet.cp.agentClient("solo-g5-xlarge-1", { baseUrl: fleet.agent.listenUrl });
    expect((await direct.inventory()).node.name).toBe("solo-g5-xlarge-1");
    await fleet.agent.shutdown("test");
    await fleet.cp.stop();
  });
});
