import { randomUUID } from "node:crypto";
import { StartReplicaRequest, type StartReplicaRequestInput } from "@thaw/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { type PhaseEvent } from "../runtime.ts";
import { fakeDigest, fakeManifest } from "./testing/fake-tools.ts";
import { type FakeSetup, G, setupFakeRuntime } from "./testing/fake-runtime.ts";

// The peer path's command contract: the pull path's two processes, the engine started to load
// through the operator's ModelExpress server (its documented flag and environment), and a
// refusal that says what is missing when the host or the deployment cannot do it.

describe("peer path command lines (fake ctr, fake containerd API)", () => {
  let fake: FakeSetup | undefined;
  afterEach(async () => fake?.dispose());

  const digest = fakeDigest("9");
  const pinned = `ghcr.io/thaw/llama@${digest}`;
  const request = (
    port: number,
    overrides: Partial<StartReplicaRequestInput> = {},
  ): StartReplicaRequestInput => ({
    replicaId: randomUUID(),
    coldStartId: randomUUID(),
    path: "peer",
    deployment: {
      imageRef: "ghcr.io/thaw/llama:v1",
      imageDigest: digest,
      args: ["vllm", "serve", "meta-llama/Llama-3.1-8B", "--port", "8000"],
    },
    gpus: [1],
    readiness: { port, path: "/health", timeoutSeconds: 5 },
    peerSource: { replicaId: randomUUID(), nodeName: "gpu-7", rdma: true },
    ...overrides,
  });

  it("runs the engine with --load-format modelexpress and ModelExpress's environment", async () => {
    fake = await setupFakeRuntime({
      config: { modelExpress: { serverAddress: "mx.internal:8001", rdma: true } },
    });
    await fake.tools.publish({
      ref: pinned,
      digest,
      manifest: fakeManifest(5, [{ digest: fakeDigest("a"), size: 100 }]),
    });
    const req = request(fake.engine.port);
    const events: PhaseEvent[] = [];
    await fake.runtime.startReplica(req, (e) => events.push(e));
    expect(events.map((e) => e.phase)).toEqual(["pull", "create", "start", "ready"]);
    const actions = await fake.actions();
    expect(actions[0]).toEqual(["ctr", ...G, "images", "pull", pinned]);
    const run = actions[1]!;
    const env = run.flatMap((arg, i) => (run[i - 1] === "--env" ? [arg] : []));
    expect(env).toEqual(
      expect.arrayContaining([
        "MX_SERVER_ADDRESS=mx.internal:8001",
        "MODEL_EXPRESS_URL=mx.internal:8001",
        "MX_P2P_METADATA=1",
        "MX_POOL_REG=1",
        // EFA: libfabric, since UCX can fall back to TCP there without a word.
        "MX_NIXL_BACKEND=LIBFABRIC",
        "MX_ARTIFACT_TRANSFER=1",
      ]),
    );
    // The engine's own command, with the load format added after it.
    expect(run.slice(run.indexOf("--") + 1)).toEqual([
      pinned,
      req.replicaId,
      "vllm",
      "serve",
      "meta-llama/Llama-3.1-8B",
      "--port",
      "8000",
      "--load-format",
      "modelexpress",
    ]);
  });

  it("keeps a load format the deployment chose, and skips the caches when told to", async () => {
    fake = await setupFakeRuntime({
      config: { modelExpress: { serverAddress: "mx.internal:8001", rdma: false } },
    });
    await fake.tools.publish({ ref: pinned, digest, manifest: fakeManifest(5, []) });
    const req = request(fake.engine.port, {
      deployment: {
        imageRef: "ghcr.io/thaw/llama:v1",
        imageDigest: digest,
        args: ["vllm", "serve", "m", "--load-format", "mx"],
      },
      peerSource: { replicaId: randomUUID(), nodeName: "gpu-7", rdma: false, kernelCaches: false },
    });
    await fake.runtime.startReplica(req, () => undefined);
    const run = (await fake.actions())[1]!;
    expect(run.filter((arg) => arg === "--load-format")).toHaveLength(1);
    expect(run).toContain("MX_NIXL_BACKEND=UCX");
    expect(run.some((arg) => arg.startsWith("MX_ARTIFACT_TRANSFER"))).toBe(false);
  });

  it("refuses before anything runs: no ModelExpress server here, or no engine command", async () => {
    fake = await setupFakeRuntime();
    const withoutServer = fake.runtime.refusal(
      StartReplicaRequest.parse(request(fake.engine.port)),
    );
    expect(withoutServer).toMatch(/no ModelExpress server \(THAW_MODELEXPRESS_SERVER\)/);
    await fake.dispose();
    fake = await setupFakeRuntime({
      config: { modelExpress: { serverAddress: "mx.internal:8001", rdma: false } },
    });
    const req = request(fake.engine.port, { deployment: { imageRef: "ghcr.io/thaw/llama:v1" } });
    expect(fake.runtime.refusal(StartReplicaRequest.parse(req))).toMatch(
      /needs the deployment's engine command/,
    );
    await expect(fake.runtime.startReplica(req, () => undefined)).rejects.toThrow(
      /needs the deployment's engine command/,
    );
    expect(await fake.actions()).toEqual([]);
  });
});
