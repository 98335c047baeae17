import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { type StartReplicaRequestInput } from "@thaw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type PhaseEvent } from "../runtime.ts";
import { CHECKPOINT_CAPABILITIES } from "./commands.ts";
import { fakeDigest, fakeManifest } from "./testing/fake-tools.ts";
import { type FakeSetup, G, setupFakeRuntime } from "./testing/fake-runtime.ts";

// The pull path runs for real in containerd-runtime.integration.test.ts; this pins its command
// lines and API calls, and the options that only matter on GPU hosts (GPUs, checkpointable
// containers).

describe("pull path command lines and API calls (fake ctr, fake containerd API)", () => {
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

  it("pulls by digest over TLS, and creates a checkpointable GPU container", async () => {
    const digest = fakeDigest("7");
    const pinned = `ghcr.io/thaw/llama@${digest}`;
    await fake.tools.publish({
      ref: pinned,
      digest,
      manifest: fakeManifest(5, [{ digest: fakeDigest("8"), size: 100 }]),
    });
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
      ["ctr", ...G, "images", "pull", pinned],
      // Checkpointable, and confined all the same: the default seccomp profile (issue 23).
      // Container and task in one process, as a plain `ctr run -d`; checkpointable, and
      // confined all the same: the default seccomp profile (issue 23).
      ["ctr", ...G, "run", "--detach", "--log-uri", `file://${fake.logDir}/${req.replicaId}.log`,
        "--net-host", "--cap-drop", "CAP_NET_RAW", "--seccomp",
        "--label", `thaw.replica-id=${req.replicaId}`, "--label", `thaw.cold-start-id=${req.coldStartId}`,
        "--env", "OMP_NUM_THREADS=1", "--env", "MKL_NUM_THREADS=1",
        "--gpus", "3",
        ...CHECKPOINT_CAPABILITIES.flatMap((cap) => ["--cap-add", cap]),
        "--annotation", "org.criu.config=/etc/thaw/criu/runc.conf",
        "--", pinned, req.replicaId, "vllm", "serve", "--port", "8000"],
    ]);
    // Only the pull and the run were processes: the store, the image record and the task's
    // state were read over containerd's API.
    expect((await fake.tools.calls()).filter((c) => c[0] === "ctr")).toHaveLength(2);
    expect((await fake.tools.calls()).filter((c) => c[0] === "api").map((c) => c[1])).toEqual([
      "Content.List",
      "Images.Get",
      "Content.Read",
    ]);
    expect(events[0]).toMatchObject({
      bytes: events[0]!.attributes!.imageBytes,
      attributes: { unpackSeconds: 0.0015 },
    });
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
      await crashing.tools.publish({
        ref: "ghcr.io/thaw/llama:v1",
        digest: fakeDigest("7"),
        manifest: fakeManifest(5, []),
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
