import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { type StartReplicaRequestInput } from "@thaw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type PhaseEvent } from "../runtime.ts";
import { CHECKPOINT_CAPABILITIES } from "./commands.ts";
import { fakeDigest, fakeManifest, manifestDigest } from "./testing/fake-tools.ts";
import { type FakeSetup, G, setupFakeRuntime } from "./testing/fake-runtime.ts";

// The pull path runs for real in containerd-runtime.integration.test.ts; this pins its calls
// (containerd API calls and ctr command lines) and the options that only matter on GPU hosts
// (GPUs, checkpointable containers).

describe("pull path calls (fake containerd API, fake ctr)", () => {
  let fake: FakeSetup;
  beforeEach(async () => {
    fake = await setupFakeRuntime();
  });
  afterEach(async () => fake.dispose());

  const request = (overrides: Partial<StartReplicaRequestInput>): StartReplicaRequestInput => ({
    replicaId: randomUUID(),
    coldStartId: randomUUID(),
    path: "pull",
    deployment: { imageRef: "ghcr.io/thaw/llama:v1" },
    gpus: [],
    readiness: { port: fake.engine.port, path: "/health", timeoutSeconds: 5 },
    ...overrides,
  });

  it("pulls by digest over the API, and creates a checkpointable GPU container", async () => {
    const layer = { digest: fakeDigest("8"), size: 100 };
    const manifest = fakeManifest(5, [layer]);
    const digest = manifestDigest(manifest);
    const pinned = `ghcr.io/thaw/llama@${digest}`;
    await fake.tools.publish({ ref: pinned, digest, manifest });
    const config = (JSON.parse(manifest) as { config: { digest: string } }).config.digest;
    const req = request({
      deployment: {
        imageRef: "ghcr.io/thaw/llama:v1",
        imageDigest: digest,
        checkpointable: true,
        args: ["vllm", "serve", "--port", "8000"],
      },
      gpus: [3],
    });
    const events: PhaseEvent[] = [];
    await fake.runtime.startReplica(req, (e) => events.push(e));
    expect(events.map((e) => e.phase)).toEqual(["pull", "create", "start", "ready"]);
    // prettier-ignore
    expect(await fake.actions()).toEqual([
      // The layer, unpacked under its chain ID; then the config and manifest (parents after
      // children, with their GC labels); the image record last.
      ["api", "Content.Write", layer.digest],
      ["api", "Snapshots.Commit", layer.digest],
      ["api", "Content.Write", config],
      ["api", "Content.Write", digest],
      ["api", "Images.Create", pinned],
      // Checkpointable, and confined all the same: the default seccomp profile (issue 23).
      ["ctr", ...G, "containers", "create", "--net-host", "--cap-drop", "CAP_NET_RAW", "--seccomp",
        "--label", `thaw.replica-id=${req.replicaId}`, "--label", `thaw.cold-start-id=${req.coldStartId}`,
        "--env", "OMP_NUM_THREADS=1", "--env", "MKL_NUM_THREADS=1",
        "--gpus", "3",
        ...CHECKPOINT_CAPABILITIES.flatMap((cap) => ["--cap-add", cap]),
        "--annotation", "org.criu.config=/etc/thaw/criu/runc.conf",
        "--", pinned, req.replicaId, "vllm", "serve", "--port", "8000"],
      ["api", "Tasks.Create", req.replicaId],
      ["api", "Tasks.Start", req.replicaId],
    ]);
    expect(events[0]).toMatchObject({
      bytes: Buffer.byteLength(manifest) + 5 + 100,
      attributes: {
        imageDigest: digest,
        imageBytes: Buffer.byteLength(manifest) + 5 + 100,
        layers: 1,
        cached: false,
        registryCredential: false,
      },
    });

    // The node holds it now: a second start writes nothing and moves no bytes.
    await fake.tools.forgetCalls();
    const again: PhaseEvent[] = [];
    await fake.runtime.startReplica({ ...req, replicaId: randomUUID() }, (e) => again.push(e));
    expect((await fake.actions()).filter((a) => a[1] === "Content.Write")).toEqual([]);
    expect(again[0]).toMatchObject({ bytes: 0, attributes: { cached: true } });
  });

  it("fails the pull with the registry's words and what to do, before creating anything", async () => {
    const error = await fake.runtime
      .startReplica(
        request({ deployment: { imageRef: "ghcr.io/thaw/missing:v1" } }),
        () => undefined,
      )
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ phase: "pull" });
    expect((error as Error).message).toMatch(
      /pull the image: ghcr\.io\/thaw\/missing:v1 not found: .*404.*MANIFEST_UNKNOWN.*Check that the node reaches the registry/,
    );
    expect((await fake.actions()).filter((a) => a[0] === "ctr")).toEqual([]);
  });

  it("rejects a request whose strings could be read as options", async () => {
    await expect(
      fake.runtime.startReplica(
        request({ deployment: { imageRef: "--plain-http" } }),
        () => undefined,
      ),
    ).rejects.toThrow(/image reference/);
    expect(await fake.tools.calls()).toEqual([]);
  });

  it("fails the start phase early, with the container's last log lines, when the task exits", async () => {
    const crashing = await setupFakeRuntime({ taskExits: true });
    try {
      const manifest = fakeManifest(5, []);
      await crashing.tools.publish({
        ref: "ghcr.io/thaw/llama:v1",
        digest: manifestDigest(manifest),
        manifest,
      });
      const req = request({ readiness: { port: 1, path: "/health", timeoutSeconds: 60 } });
      await mkdir(crashing.logDir, { recursive: true });
      await writeFile(
        path.join(crashing.logDir, `${req.replicaId}.log`),
        "INFO loading model\nRuntimeError: CUDA error: no CUDA-capable device is detected\n",
      );
      const t0 = performance.now();
      const error = await crashing.runtime
        .startReplica(req, () => undefined)
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ phase: "start" });
      expect((error as Error).message).toContain("the container's task exited before it was ready");
      expect((error as Error).message).toContain(
        "RuntimeError: CUDA error: no CUDA-capable device is detected",
      );
      expect(performance.now() - t0).toBeLessThan(10_000);
    } finally {
      await crashing.dispose();
    }
  });
});
