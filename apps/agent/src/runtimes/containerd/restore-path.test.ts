import { randomUUID } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { type StartReplicaRequestInput } from "@thaw/node-agent-client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type PhaseEvent, PhaseFailedError } from "../runtime.ts";
import { fakeDigest, fakeManifest } from "./testing/fake-tools.ts";
import { type FakeSetup, G, setupFakeRuntime } from "./testing/fake-runtime.ts";

const snapshotId = randomUUID();
const CHECKPOINT = "registry.test:5000/snapshots/llama:s1";
const BASE = "registry.test:5000/models/llama:v1";
const CHECKPOINT_INDEX = JSON.stringify({
  schemaVersion: 2,
  manifests: [
    {
      mediaType: "application/vnd.containerd.container.criu.checkpoint.criu.tar",
      digest: fakeDigest("1"),
      size: 3_400_000,
    },
    {
      mediaType: "application/vnd.containerd.container.checkpoint.config.v1+proto",
      digest: fakeDigest("2"),
      size: 700,
    },
    {
      mediaType: "application/vnd.containerd.container.rw.tar",
      digest: fakeDigest("3"),
      size: 9_000,
    },
  ],
});

describe("restore path (fake ctr, criu, cuda-checkpoint)", () => {
  let fake: FakeSetup;

  beforeEach(async () => {
    fake = await setupFakeRuntime({ pids: [4242, 4243], nonCudaPids: [4243], snapshotId });
    await fake.tools.publish({
      ref: CHECKPOINT,
      digest: fakeDigest("c"),
      manifest: CHECKPOINT_INDEX,
    });
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
        checkpointRef: CHECKPOINT,
        sleepLevel: 2,
        wake: { path: "/wake_up" },
        reloadWeights: { path: "/collective_rpc", body: '{"method":"reload_weights"}' },
      },
    },
    gpus: [0],
    readiness: { port: fake.engine.port, path: "/health", timeoutSeconds: 5 },
    warmup: { path: "/v1/completions", method: "POST", body: '{"prompt":"hi","max_tokens":1}' },
    ...overrides,
  });

  it("fetches a remote snapshot, restores through CRIU, toggles CUDA, wakes and reloads", async () => {
    const events: PhaseEvent[] = [];
    const req = request();
    const started = await fake.runtime.startReplica(req, (e) => events.push(e));

    expect(events.map((e) => e.phase)).toEqual([
      "fetch_snapshot",
      "restore",
      "load_weights",
      "warmup",
      "ready",
    ]);
    // prettier-ignore
    expect(await fake.actions()).toEqual([
      ["criu", "check"],
      ["ctr", ...G, "content", "fetch", "--plain-http", "--all-platforms",
        "--label", `thaw.snapshot-id=${snapshotId}`, CHECKPOINT],
      ["ctr", ...G, "images", "pull", "--plain-http", BASE],
      ["ctr", ...G, "containers", "restore", "--live", "--rw", req.replicaId, CHECKPOINT],
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
    // The checkpoint's blobs (index + 3) and the base image's (manifest + config + layer).
    const indexBytes = Buffer.byteLength(CHECKPOINT_INDEX);
    const baseManifest = fakeManifest(1_000, [{ digest: fakeDigest("d"), size: 2_000_000 }]);
    expect(fetch!.bytes).toBe(
      indexBytes + 3_400_000 + 700 + 9_000 + Buffer.byteLength(baseManifest) + 1_000 + 2_000_000,
    );
    expect(fetch!.attributes).toMatchObject({ baseImagePulled: true, checkpointRef: CHECKPOINT });
    expect(restore!.attributes).toMatchObject({ cudaProcesses: 1 });
    expect(load!.attributes).toMatchObject({ sleepLevel: 2, probeAttempts: 1 });
    expect(load!.attributes!.wakeSeconds).toBeGreaterThanOrEqual(0);
    expect(load!.attributes!.reloadSeconds).toBeGreaterThanOrEqual(0);
    expect(started).toMatchObject({ containerId: req.replicaId, readiness: { status: 200 } });
  });

  it("skips fetch_snapshot when the node holds the snapshot and its base image", async () => {
    await fake.tools.preload(CHECKPOINT, `thaw.snapshot-id=${snapshotId}`);
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
        await other.tools.publish({
          ref: CHECKPOINT,
          digest: fakeDigest("c"),
          manifest: CHECKPOINT_INDEX,
        });
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
      checkpointRef: CHECKPOINT,
      sleepLevel: 2,
    });
    expect(captured).toMatchObject({ snapshotId: newSnapshot, pushed: true });
    expect(fake.engine.requests.at(-1)).toBe("POST /sleep?level=2");
    expect((await fake.actions()).slice(before)).toEqual([
      ["criu", "check"],
      ["cuda-checkpoint", "--get-state", "--pid", "4242"],
      ["cuda-checkpoint", "--toggle", "--pid", "4242"],
      ["cuda-checkpoint", "--get-state", "--pid", "4243"],
      ["ctr", ...G, "containers", "checkpoint", "--task", "--rw", req.replicaId, CHECKPOINT],
      ["ctr", ...G, "images", "label", CHECKPOINT, `thaw.snapshot-id=${newSnapshot}`],
      ["ctr", ...G, "images", "push", "--plain-http", CHECKPOINT],
      ["ctr", ...G, "tasks", "kill", "-s", "SIGTERM", req.replicaId],
      ["ctr", ...G, "tasks", "delete", req.replicaId],
      ["ctr", ...G, "containers", "delete", req.replicaId],
    ]);
  });
});
