import { createHash, randomUUID } from "node:crypto";
import { stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { StartReplicaRequest, type StartReplicaRequestInput } from "@thaw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type PhaseEvent, PhaseFailedError } from "../runtime.ts";
import { CHECKPOINT_MEDIA, encodeProtoAny, SPEC_TYPE_URL } from "./checkpoint-spec.ts";
import { type ContainerSpec, LABEL_COLD_START, LABEL_REPLICA } from "./commands.ts";
import { type ModelExpressSettings } from "./config.ts";
import { withKernelCache } from "./kernel-cache.ts";
import { withModelExpress } from "./model-express.ts";
import { type BlobDescriptor, fakeDigest, fakeManifest } from "./testing/fake-tools.ts";
import { type FakeSetup, G, setupFakeRuntime } from "./testing/fake-runtime.ts";

const snapshotId = randomUUID();
const STORE = "registry.test:5000/thaw-snapshots";
const BASE = "registry.test:5000/models/llama:v1";
const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

/**
 * A checkpoint as `ctr containers checkpoint --task --rw` writes it, of a container created the
 * cold path's way (checkpointable) on another replica: `created` changes what that container
 * was created with (a tampered checkpoint), `extra` adds blobs.
 */
async function publishCheckpoint(
  fake: FakeSetup,
  o: {
    env?: Record<string, string>;
    gpus?: number[];
    created?: (flags: string) => string;
    imageName?: string;
    extra?: BlobDescriptor[];
    /** The engine's command (the deployment's args). */
    args?: string[];
    /** Captured on a host with this ModelExpress server: the engine loaded through it. */
    modelExpress?: ModelExpressSettings;
    /** The deployment's: its kernel-cache directory was mounted. */
    deploymentId?: string;
  } = {},
): Promise<{ ref: string; digest: string; index: string }> {
  const host = fake.runtime.host;
  const sourceId = randomUUID();
  // As containerSpecFor builds it on the capturing host.
  const spec: ContainerSpec = {
    id: sourceId,
    imageRef: BASE,
    labels: { [LABEL_REPLICA]: sourceId, [LABEL_COLD_START]: randomUUID() },
    env: o.env ?? {},
    gpus: o.gpus ?? [0],
    checkpointable: { criuConfigPath: host.config.criuConfigPath },
    ...(o.args ? { args: o.args } : {}),
  };
  const withCache = withKernelCache(
    spec,
    o.deploymentId && path.join(host.config.kernelCacheDir, o.deploymentId),
  );
  await host.run(
    host.ctr.containerCreate(
      withModelExpress(
        withCache,
        o.modelExpress,
        StartReplicaRequest.parse({
          replicaId: sourceId,
          coldStartId: randomUUID(),
          path: "pull",
          deployment: { imageRef: BASE },
          readiness: { port: 8000, timeoutSeconds: 5 },
        }),
      ),
    ),
    "create the captured container",
  );
  const info = JSON.parse((await host.run(host.ctr.containerInfo(sourceId), "info")).stdout) as {
    Spec: { created: string };
  };
  await host.run(host.ctr.containerDelete(sourceId), "delete the captured container");
  if (o.created) info.Spec.created = o.created(info.Spec.created);
  const blobs = [
    await fake.tools.blob(CHECKPOINT_MEDIA.imageName, o.imageName ?? BASE),
    await fake.tools.blob(CHECKPOINT_MEDIA.runtimeName, "io.containerd.runc.v2"),
    await fake.tools.blob(CHECKPOINT_MEDIA.criu, "criu images ".repeat(1_000)),
    await fake.tools.blob(
      CHECKPOINT_MEDIA.config,
      encodeProtoAny(SPEC_TYPE_URL, Buffer.from(JSON.stringify(info.Spec))),
    ),
    await fake.tools.blob(CHECKPOINT_MEDIA.rw, "rw layer"),
    ...(o.extra ?? []),
  ];
  const index = JSON.stringify({
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.index.v1+json",
    manifests: blobs,
  });
  const digest = sha256(index);
  const ref = `${STORE}@${digest}`;
  await fake.tools.publish({ ref, digest, manifest: index });
  await fake.tools.forgetCalls();
  return { ref, digest, index };
}

const CAPTURE_TAG = `${STORE}:org.deployment.snapshot`;

describe("restore path (fake ctr, criu, cuda-checkpoint)", () => {
  let fake: FakeSetup;

  let checkpoint: { ref: string; digest: string; index: string };

  beforeEach(async () => {
    fake = await setupFakeRuntime({ pids: [4242, 4243], nonCudaPids: [4243], snapshotId });
    checkpoint = await publishCheckpoint(fake);
    await fake.tools.publish({
      ref: BASE,
      digest: fakeDigest("b"),
      manifest: fakeManifest(1_000, [{ digest: fakeDigest("d"), size: 2_000_000 }]),
    });
  });
  afterEach(async () => fake.dispose());

  const request = (
    overrides: Partial<StartReplicaRequestInput> = {},
  ): StartReplicaRequestInput => ({
    replicaId: randomUUID(),
    coldStartId: randomUUID(),
    path: "restore",
    deployment: {
      imageRef: BASE,
      snapshot: {
        snapshotId,
        checkpointRef: checkpoint.ref,
        sleepLevel: 2,
        wake: { path: "/wake_up" },
        reloadWeights: { path: "/collective_rpc", body: '{"method":"reload_weights"}' },
        stageWeights: true,
      },
    },
    gpus: [0],
    readiness: { port: fake.engine.port, path: "/health", timeoutSeconds: 5 },
    warmup: { path: "/v1/completions", method: "POST", body: '{"prompt":"hi","max_tokens":1}' },
    ...overrides,
  });

  /** The weights staging's mount and unmount run beside CRIU: apart from the ordered calls. */
  const isStaging = (call: string[]) =>
    call[5] === "images" && (call[6] === "mount" || call[6] === "unmount");

  it("fetches a remote snapshot, restores through CRIU, toggles CUDA, wakes and reloads", async () => {
    const events: PhaseEvent[] = [];
    const req = request();
    const weights = "w".repeat(3_000_000);
    await fake.tools.imageFiles(BASE, {
      "models/llama/model-00001-of-00002.safetensors": weights,
      "models/llama/model-00002-of-00002.safetensors": weights.slice(0, 1_000),
      "models/llama/config.json": "{}",
      "usr/lib/python3/site.py": "# not weights",
    });
    const started = await fake.runtime.startReplica(req, (e) => events.push(e));

    expect(events.map((e) => e.phase)).toEqual([
      "fetch_snapshot",
      "restore",
      "load_weights",
      "warmup",
      "ready",
    ]);
    const criuConfig = fake.runtime.host.config.criuConfigPath;
    const actions = await fake.actions();
    // prettier-ignore
    expect(actions.filter((call) => !isStaging(call))).toEqual([
      ["criu", "check"],
      ["ctr", ...G, "content", "fetch", "--plain-http", "--all-platforms",
        "--label", `thaw.snapshot-id=${snapshotId}`, checkpoint.ref],
      ["ctr", ...G, "images", "pull", "--plain-http", BASE],
      // The container a cold start makes (checkpointable, as the captured one was), built and
      // read back to hold the checkpoint's spec against, then removed for the restore.
      ["ctr", ...G, "containers", "create", "--net-host", "--cap-drop", "CAP_NET_RAW", "--seccomp",
        "--label", `thaw.replica-id=${req.replicaId}`, "--label", `thaw.cold-start-id=${req.coldStartId}`,
        "--env", "OMP_NUM_THREADS=1", "--env", "MKL_NUM_THREADS=1", "--gpus", "0",
        "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SYS_PTRACE", "--cap-add", "CAP_CHECKPOINT_RESTORE",
        "--cap-add", "CAP_NET_ADMIN", "--cap-add", "CAP_SYS_TIME", "--cap-add", "CAP_SYS_RESOURCE",
        "--cap-add", "CAP_DAC_READ_SEARCH", "--annotation", `org.criu.config=${criuConfig}`,
        "--", BASE, req.replicaId],
      ["ctr", ...G, "containers", "delete", req.replicaId],
      ["ctr", ...G, "containers", "restore", "--live", "--rw", req.replicaId, checkpoint.ref],
      ["cuda-checkpoint", "--get-state", "--pid", "4242"],
      ["cuda-checkpoint", "--toggle", "--pid", "4242"],
      ["cuda-checkpoint", "--get-state", "--pid", "4243"],
    ]);
    expect(fake.engine.requests).toEqual([
      "POST /wake_up",
      'POST /collective_rpc {"method":"reload_weights"}',
      "GET /health",
      'POST /v1/completions {"prompt":"hi","max_tokens":1}',
    ]);
    const [fetch, restore, load] = events;
    // The checkpoint's blobs (index + its 5) and the base image's (manifest + config + layer).
    const { manifests } = JSON.parse(checkpoint.index) as { manifests: BlobDescriptor[] };
    const baseManifest = fakeManifest(1_000, [{ digest: fakeDigest("d"), size: 2_000_000 }]);
    expect(fetch!.bytes).toBe(
      Buffer.byteLength(checkpoint.index) +
        manifests.reduce((sum, m) => sum + m.size, 0) +
        Buffer.byteLength(baseManifest) +
        1_000 +
        2_000_000,
    );
    expect(fetch!.attributes).toMatchObject({
      baseImagePulled: true,
      checkpointRef: checkpoint.ref,
    });
    expect(restore!.attributes).toMatchObject({ cudaProcesses: 1 });
    // The weights were read into the page cache from a read-only mount of the base image while
    // CRIU worked, then unmounted (its view snapshot removed): only the weight files.
    const staging = actions.filter(isStaging);
    expect(staging.map((call) => call.slice(5, 8))).toEqual([
      ["images", "mount", BASE],
      ["images", "unmount", "--rm"],
    ]);
    expect(staging[1]![8]).toBe(staging[0]![8]);
    expect(load!.attributes).toMatchObject({
      sleepLevel: 2,
      probeAttempts: 1,
      stagedFiles: 2,
      stagedBytes: 3_001_000,
    });
    expect(load!.attributes!.stagingError).toBeUndefined();
    expect(load!.attributes!.wakeSeconds).toBeGreaterThanOrEqual(0);
    expect(load!.attributes!.reloadSeconds).toBeGreaterThanOrEqual(0);
    expect(started).toMatchObject({ containerId: req.replicaId, readiness: { status: 200 } });
  });

  it("restores all the same when the weights cannot be staged, and says why", async () => {
    await fake.tools.failWhen("ctr", "images mount", "ctr: mount: operation not permitted");
    const events: PhaseEvent[] = [];
    await fake.runtime.startReplica(request(), (e) => events.push(e));
    const load = events.find((e) => e.phase === "load_weights");
    expect(String(load!.attributes!.stagingError)).toMatch(/operation not permitted/);
    expect(events.at(-1)!.phase).toBe("ready");
    // Nothing was mounted, so nothing is unmounted.
    expect((await fake.actions()).filter((c) => c[6] === "unmount")).toEqual([]);
  });

  it("stages nothing unless the scheduler asks (where staging does not pay: gp3)", async () => {
    const req = request();
    delete req.deployment.snapshot!.stageWeights;
    const events: PhaseEvent[] = [];
    await fake.runtime.startReplica(req, (e) => events.push(e));
    expect((await fake.actions()).filter(isStaging)).toEqual([]);
    expect(fake.engine.requests).toContain('POST /collective_rpc {"method":"reload_weights"}');
  });

  it("stages nothing for a checkpoint that keeps its weights (sleep level 1)", async () => {
    const req = request();
    req.deployment.snapshot = { ...req.deployment.snapshot!, sleepLevel: 1 };
    delete req.deployment.snapshot.reloadWeights;
    const events: PhaseEvent[] = [];
    await fake.runtime.startReplica(req, (e) => events.push(e));
    expect((await fake.actions()).filter(isStaging)).toEqual([]);
    expect(events.find((e) => e.phase === "load_weights")!.attributes!.stagedFiles).toBeUndefined();
  });

  it("builds the restored container with exactly the cold path's create command", async () => {
    const env = { HF_HOME: "/models", VLLM_PORT: "8000" };
    checkpoint = await publishCheckpoint(fake, { env });
    const restore = request({ deployment: { ...request().deployment, env } });
    await fake.runtime.startReplica(restore, () => undefined);
    const pull = request({
      path: "pull",
      deployment: { imageRef: BASE, env, checkpointable: true },
      warmup: undefined,
    });
    await fake.runtime.startReplica(pull, () => undefined);
    const actions = await fake.actions();
    const creates = actions.filter((c) => c[5] === "containers" && c[6] === "create");
    const runs = actions.filter((c) => c[5] === "run");
    expect([creates.length, runs.length]).toEqual([1, 1]);
    // The pull path runs its container (`ctr run --detach --log-uri <uri> …`): past its own
    // three flags, the same arguments as the restore's `containers create`.
    expect(runs[0]!.slice(6, 8)).toEqual(["--detach", "--log-uri"]);
    const withoutIds = (c: string[], r: StartReplicaRequestInput) =>
      c.map((a) => a.replace(r.replicaId, "<replica>").replace(r.coldStartId, "<start>"));
    expect(withoutIds(creates[0]!.slice(7), restore)).toEqual(withoutIds(runs[0]!.slice(9), pull));
  });

  it("refuses a checkpoint the snapshot store serves under another digest", async () => {
    // The store answers the capture's digest with other bytes (a swapped checkpoint).
    const swapped = `${STORE}@${fakeDigest("a")}`;
    await fake.tools.publish({
      ref: swapped,
      digest: checkpoint.digest,
      manifest: checkpoint.index,
    });
    const req = request();
    req.deployment.snapshot!.checkpointRef = swapped;
    const events: PhaseEvent[] = [];
    const error = await fake.runtime
      .startReplica(req, (e) => events.push(e))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ phase: "fetch_snapshot" });
    expect((error as Error).message).toContain(
      `the snapshot store served ${checkpoint.digest} for ${swapped}: refusing a checkpoint that is not the one captured`,
    );
    const actions = await fake.actions();
    expect(actions.filter((c) => c[6] === "restore" || c[6] === "create")).toEqual([]);
  });

  it.each<[string, Parameters<typeof publishCheckpoint>[1], string]>([
    [
      "keeps NET_RAW",
      { created: (f) => f.replace(" --cap-drop CAP_NET_RAW", "") },
      "its spec differs from the one the agent builds at spec.created",
    ],
    [
      "adds a capability",
      { created: (f) => `${f} --cap-add CAP_SYS_MODULE` },
      "its spec differs from the one the agent builds at spec.created",
    ],
    [
      "was captured on other GPUs",
      { gpus: [3] },
      "its spec differs from the one the agent builds at spec.created",
    ],
    [
      "names another image",
      { imageName: "registry.test:5000/other-tenant/secret:v1" },
      `its image "registry.test:5000/other-tenant/secret:v1" is not the deployment's`,
    ],
  ])("refuses a checkpoint that %s, before restoring anything", async (_name, tamper, problem) => {
    const tampered = await publishCheckpoint(fake, tamper);
    const req = request();
    req.deployment.snapshot!.checkpointRef = tampered.ref;
    const error = await fake.runtime.startReplica(req, () => undefined).catch((e: unknown) => e);
    expect(error).toMatchObject({ phase: "restore" });
    expect((error as Error).message).toContain(`refusing to restore checkpoint ${tampered.digest}`);
    expect((error as Error).message).toContain(problem);
    const actions = await fake.actions();
    expect(actions.filter((c) => c[6] === "restore")).toEqual([]);
    expect(await fake.runtime.host.run(fake.runtime.host.ctr.containerList(), "ls")).toMatchObject({
      stdout: "",
    });
  });

  it("restores the checkpoint this node captured, found by its digest under the capture's tag", async () => {
    await fake.tools.publish({
      ref: CAPTURE_TAG,
      digest: checkpoint.digest,
      manifest: checkpoint.index,
    });
    await fake.tools.preload(CAPTURE_TAG, `thaw.snapshot-id=${snapshotId}`);
    await fake.tools.preload(BASE);
    const req = request({ warmup: undefined });
    const events: PhaseEvent[] = [];
    await fake.runtime.startReplica(req, (e) => events.push(e));
    expect(events.map((e) => e.phase)).toEqual(["restore", "load_weights", "ready"]);
    const actions = await fake.actions();
    expect(actions.filter((c) => c.includes("fetch") || c.includes("pull"))).toEqual([]);
    expect(actions.filter((c) => c[6] === "restore")).toEqual([
      ["ctr", ...G, "containers", "restore", "--live", "--rw", req.replicaId, CAPTURE_TAG],
    ]);
  });

  it("skips fetch_snapshot when the node holds the snapshot and its base image", async () => {
    await fake.tools.preload(checkpoint.ref, `thaw.snapshot-id=${snapshotId}`);
    await fake.tools.preload(BASE);
    const events: PhaseEvent[] = [];
    await fake.runtime.startReplica(request({ warmup: undefined }), (e) => events.push(e));
    expect(events.map((e) => e.phase)).toEqual(["restore", "load_weights", "ready"]);
    const actions = await fake.actions();
    expect(actions.filter((c) => c.includes("fetch") || c.includes("pull"))).toEqual([]);
    expect((await fake.runtime.inventory()).snapshotIds).toEqual([snapshotId]);
  });

  it("names the restore phase and cuda-checkpoint's stderr when the toggle fails, and removes the container", async () => {
    await fake.tools.failWhen(
      "cuda-checkpoint",
      "--toggle",
      "cuda-checkpoint: CUDA_ERROR_ILLEGAL_STATE: restore failed on device 0",
    );
    const req = request();
    const error = await fake.runtime.startReplica(req, () => undefined).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PhaseFailedError);
    expect(error).toMatchObject({ phase: "restore" });
    expect((error as Error).message).toContain(
      "CUDA_ERROR_ILLEGAL_STATE: restore failed on device 0",
    );
    expect((error as Error).message).toContain("cuda-checkpoint --toggle --pid 4242");
    expect((error as Error).message).toContain(
      "A snapshot restores only on the GPU model, driver and CUDA version it was captured on",
    );
    expect((await fake.actions()).slice(-3)).toEqual([
      ["ctr", ...G, "tasks", "kill", "-s", "SIGKILL", req.replicaId],
      ["ctr", ...G, "tasks", "delete", req.replicaId],
      ["ctr", ...G, "containers", "delete", req.replicaId],
    ]);
    expect(fake.engine.requests).toEqual([]);
  });

  it("fails the restore phase on a failing CRIU restore with ctr's stderr", async () => {
    await fake.tools.failWhen(
      "ctr",
      "containers restore",
      "ctr: OCI runtime restore failed: criu failed: type NOTIFY errno 0: unknown",
    );
    const error = await fake.runtime
      .startReplica(request(), () => undefined)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ phase: "restore" });
    expect((error as Error).message).toMatch(
      /restore the container from its checkpoint \(CRIU\).*exited with code 1.*criu failed: type NOTIFY/s,
    );
  });

  it("fails fetch_snapshot when the snapshot store does not have it", async () => {
    await fake.tools.failWhen(
      "ctr",
      "content fetch",
      "ctr: failed to resolve reference: not found",
    );
    const events: PhaseEvent[] = [];
    const error = await fake.runtime
      .startReplica(request(), (e) => events.push(e))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ phase: "fetch_snapshot" });
    expect((error as Error).message).toContain("failed to resolve reference: not found");
    expect(events).toEqual([]);
  });

  it("refuses to restore when criu check fails, before fetching anything", async () => {
    await fake.tools.failWhen(
      "criu",
      "check",
      "Error (criu/vdso.c:627): vdso: Can't find vdso symbols",
    );
    const error = await fake.runtime
      .startReplica(request(), () => undefined)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ phase: "restore" });
    expect((error as Error).message).toContain("vdso: Can't find vdso symbols");
    expect(await fake.actions()).toEqual([["criu", "check"]]);
  });

  it("refuses to restore while io_uring is enabled", async () => {
    await writeFile(path.join(fake.procSysDir, "kernel", "io_uring_disabled"), "0\n");
    const error = await fake.runtime
      .startReplica(request(), () => undefined)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ phase: "restore" });
    expect((error as Error).message).toContain("kernel.io_uring_disabled is 0");
  });

  it("fails when a GPU replica comes back without any checkpointed CUDA process", async () => {
    const error = await (async () => {
      const other = await setupFakeRuntime({ cudaState: "running", snapshotId });
      try {
        checkpoint = await publishCheckpoint(other);
        await other.tools.publish({
          ref: BASE,
          digest: fakeDigest("b"),
          manifest: fakeManifest(1, []),
        });
        const req = {
          ...request(),
          readiness: { port: other.engine.port, path: "/health", timeoutSeconds: 5 },
        };
        return await other.runtime.startReplica(req, () => undefined).catch((e: unknown) => e);
      } finally {
        await other.dispose();
      }
    })();
    expect(error).toMatchObject({ phase: "restore" });
    expect((error as Error).message).toContain(
      "no process of the restored container had checkpointed CUDA state",
    );
  });

  it("fails load_weights when the engine does not wake", async () => {
    fake.engine.answer("/wake_up", 500, "CUDA out of memory");
    const error = await fake.runtime
      .startReplica(request(), () => undefined)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ phase: "load_weights" });
    expect((error as Error).message).toContain("wake the engine: POST");
    expect((error as Error).message).toContain("answered 500: CUDA out of memory");
  });

  it("captures a snapshot: engine sleep, CUDA to host, CRIU dump, label, push, stop", async () => {
    const pullRef = "registry.test:5000/models/llama:v1";
    const req = request({
      path: "pull",
      deployment: { imageRef: pullRef, checkpointable: true },
      warmup: undefined,
      gpus: [],
    });
    await fake.runtime.startReplica(req, () => undefined);
    await fake.tools.setCudaState(4242, "running");
    const before = (await fake.actions()).length;
    const newSnapshot = randomUUID();
    const captured = await fake.runtime.captureSnapshot({
      replicaId: req.replicaId,
      snapshotId: newSnapshot,
      checkpointRef: CAPTURE_TAG,
      sleepLevel: 2,
    });
    // The digest of the checkpoint as written: what the control plane records and restores by.
    expect(captured).toMatchObject({
      snapshotId: newSnapshot,
      pushed: true,
      digest: fakeDigest("c"),
    });
    expect(fake.engine.requests.at(-1)).toBe("POST /sleep?level=2");
    expect((await fake.actions()).slice(before)).toEqual([
      ["criu", "check"],
      ["cuda-checkpoint", "--get-state", "--pid", "4242"],
      ["cuda-checkpoint", "--toggle", "--pid", "4242"],
      ["cuda-checkpoint", "--get-state", "--pid", "4243"],
      ["ctr", ...G, "containers", "checkpoint", "--task", "--rw", req.replicaId, CAPTURE_TAG],
      ["ctr", ...G, "images", "label", CAPTURE_TAG, `thaw.snapshot-id=${newSnapshot}`],
      ["ctr", ...G, "images", "push", "--plain-http", CAPTURE_TAG],
      ["ctr", ...G, "tasks", "kill", "-s", "SIGTERM", req.replicaId],
      ["ctr", ...G, "tasks", "delete", req.replicaId],
      ["ctr", ...G, "containers", "delete", req.replicaId],
    ]);
  });

  describe("weights from a peer (sleep level 2, ModelExpress)", () => {
    const MX = { serverAddress: "mx.internal:8001", rdma: true };
    const ARGS = ["vllm", "serve", "meta-llama/Llama-3.1-8B", "--enable-sleep-mode"];
    const peerSource = { replicaId: randomUUID(), nodeName: "gpu-7", rdma: true };
    const fromPeer = (overrides: Partial<StartReplicaRequestInput> = {}) => {
      const req = request({ peerSource, ...overrides });
      req.deployment = { ...req.deployment, args: ARGS };
      return req;
    };

    it("refuses up front on a host without a ModelExpress server", async () => {
      const req = fromPeer();
      expect(fake.runtime.refusal(StartReplicaRequest.parse(req))).toMatch(
        /no ModelExpress server \(THAW_MODELEXPRESS_SERVER\), so a restored engine cannot receive its weights from a peer/,
      );
      await expect(fake.runtime.startReplica(req, () => undefined)).rejects.toThrow(
        /no ModelExpress server/,
      );
      expect(await fake.actions()).toEqual([]);
    });

    it("reloads through ModelExpress on a host with a server: peer_transfer, nothing staged from local files", async () => {
      const mx = await setupFakeRuntime({
        pids: [4242, 4243],
        nonCudaPids: [4243],
        snapshotId,
        config: { modelExpress: MX },
      });
      try {
        const captured = await publishCheckpoint(mx, { args: ARGS, modelExpress: MX });
        await mx.tools.publish({
          ref: BASE,
          digest: fakeDigest("b"),
          manifest: fakeManifest(1_000, [{ digest: fakeDigest("d"), size: 2_000_000 }]),
        });
        await mx.tools.imageFiles(BASE, { "models/model.safetensors": "w".repeat(1_000) });
        const req = fromPeer({
          readiness: { port: mx.engine.port, path: "/health", timeoutSeconds: 5 },
        });
        req.deployment.snapshot = { ...req.deployment.snapshot!, checkpointRef: captured.ref };
        // Without the reload call nothing would receive the weights.
        const noReload = StartReplicaRequest.parse(req);
        delete noReload.deployment.snapshot!.reloadWeights;
        expect(mx.runtime.refusal(noReload)).toMatch(/needs the snapshot's reloadWeights call/);
        expect(mx.runtime.refusal(StartReplicaRequest.parse(req))).toBeUndefined();

        const events: PhaseEvent[] = [];
        await mx.runtime.startReplica(req, (e) => events.push(e));
        expect(events.map((e) => e.phase)).toEqual([
          "fetch_snapshot",
          "restore",
          "peer_transfer",
          "warmup",
          "ready",
        ]);
        expect(events[2]!.attributes).toMatchObject({
          weightsFrom: "peer",
          sourceNode: "gpu-7",
          sourceReplicaId: peerSource.replicaId,
          rdma: true,
          sleepLevel: 2,
        });
        expect(events[2]!.attributes!.stagedFiles).toBeUndefined();
        // stageWeights was asked for, but the reload reads no local file: nothing mounted.
        expect((await mx.actions()).filter(isStaging)).toEqual([]);
        expect(mx.engine.requests.slice(0, 2)).toEqual([
          "POST /wake_up",
          'POST /collective_rpc {"method":"reload_weights"}',
        ]);
        // The container rebuilt for the spec check loads through ModelExpress, as captured.
        const create = (await mx.actions()).find((c) => c[6] === "create")!;
        expect(create.slice(-2)).toEqual(["--load-format", "modelexpress"]);
      } finally {
        await mx.dispose();
      }
    });
  });

  it("restores a checkpoint of a container that mounted the deployment's kernel-cache directory", async () => {
    const deploymentId = randomUUID();
    checkpoint = await publishCheckpoint(fake, { deploymentId });
    const req = request();
    req.deployment = { ...req.deployment, deploymentId };
    const events: PhaseEvent[] = [];
    await fake.runtime.startReplica(req, (e) => events.push(e));
    expect(events.at(-1)!.phase).toBe("ready");
    const dir = path.join(fake.runtime.host.config.kernelCacheDir, deploymentId);
    const create = (await fake.actions()).find((c) => c[6] === "create")!;
    expect(create[create.indexOf("--mount") + 1]).toBe(
      `type=bind,src=${dir},dst=/thaw/kernel-cache,options=rbind:rw`,
    );
    // The mount's source exists before the restore needs it.
    expect((await stat(dir)).isDirectory()).toBe(true);
  });

  it("restores a checkpoint captured before the agent mounted kernel-cache directories, and still refuses a tampered one", async () => {
    const deploymentId = randomUUID();
    // Captured without the mount, restored by an agent that mounts it for this deployment.
    checkpoint = await publishCheckpoint(fake);
    const req = request();
    req.deployment = { ...req.deployment, deploymentId };
    const events: PhaseEvent[] = [];
    await fake.runtime.startReplica(req, (e) => events.push(e));
    expect(events.at(-1)!.phase).toBe("ready");
    // The legacy comparison changes nothing else: an old checkpoint with another capability
    // is refused as before.
    const tampered = await publishCheckpoint(fake, {
      created: (f) => `${f} --cap-add CAP_SYS_MODULE`,
    });
    const again = request();
    again.deployment = { ...again.deployment, deploymentId };
    again.deployment.snapshot!.checkpointRef = tampered.ref;
    const error = await fake.runtime.startReplica(again, () => undefined).catch((e: unknown) => e);
    expect((error as Error).message).toContain(`refusing to restore checkpoint ${tampered.digest}`);
  });
});
