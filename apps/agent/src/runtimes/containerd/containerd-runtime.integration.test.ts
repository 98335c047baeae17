import { randomUUID } from "node:crypto";
import { chmod, mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { StartReplicaRequest, type StartReplicaRequestInput } from "@thaw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PhaseRecorder } from "../phase-recorder.ts";
import { type PhaseEvent, PhaseFailedError } from "../runtime.ts";
import { comparableSpec, ContainerInfo, specDifferences } from "./checkpoint-spec.ts";
import { ContainerdRuntime } from "./containerd-runtime.ts";
import { pinnedReference } from "./image-blobs.ts";
import { parseTaskList } from "./parse.ts";
import { rebuiltContainer } from "./restore-path.ts";
import { runTool } from "./run-tool.ts";
import { stageImageWeights } from "./stage-weights.ts";
import { containerSpecFor, type StartContext } from "./start-context.ts";
import {
  ensureContainerTools,
  httpGet,
  type LocalStack,
  mountPointsUnder,
  startLocalStack,
} from "./testing/local-stack.ts";

// The real pull path, end to end, on this machine: containerd, a registry, an image.

const isRoot = process.getuid?.() === 0;
if (!isRoot) {
  console.warn("containerd runtime integration tests skipped: containerd needs root (run as root)");
}

describe.skipIf(!isRoot)("containerd runtime, real containerd", () => {
  let stack: LocalStack;
  let runtime: ContainerdRuntime;

  beforeAll(async () => {
    await ensureContainerTools();
    stack = await startLocalStack();
    runtime = new ContainerdRuntime({
      address: stack.address,
      namespace: stack.namespace,
      logDir: stack.logDir,
      plainHttpRegistries: [stack.registryHost],
      // busybox httpd as PID 1 ignores SIGTERM: keep the SIGKILL escalation short.
      stopGraceSeconds: 1,
      kernelCacheDir: path.join(stack.dir, "kernel-caches"),
    });
  }, 900_000);

  afterAll(async () => {
    const dir = stack?.dir;
    await stack?.stop();
    if (dir) expect(await mountPointsUnder(dir)).toEqual([]);
  }, 120_000);

  const ctr = async (...args: string[]) =>
    (
      await runTool(
        { file: "ctr", args: ["-a", stack.address, "-n", stack.namespace, ...args] },
        { what: "inspect containerd", timeoutMs: 15_000 },
      )
    ).stdout;

  const request = (
    overrides: Partial<StartReplicaRequestInput> = {},
  ): StartReplicaRequestInput => ({
    replicaId: randomUUID(),
    coldStartId: randomUUID(),
    path: "pull",
    deployment: { imageRef: stack.image.ref, imageDigest: stack.image.digest },
    gpus: [],
    readiness: { port: stack.image.httpPort, path: stack.image.readinessPath, timeoutSeconds: 20 },
    warmup: { path: stack.image.readinessPath, count: 2 },
    ...overrides,
  });

  it("pulls, creates, starts, warms up and reports ready, then stops without leftovers", async () => {
    const events: PhaseEvent[] = [];
    const req = request();
    const started = await runtime.startReplica(req, (e) => events.push(e));

    expect(events.map((e) => e.phase)).toEqual(["pull", "create", "start", "warmup", "ready"]);
    for (const [i, e] of events.entries()) {
      expect(e.seconds).toBeGreaterThanOrEqual(0);
      expect(Date.parse(e.endedAt)).toBeGreaterThanOrEqual(Date.parse(e.startedAt));
      const previous = events[i - 1];
      if (previous)
        expect(Date.parse(e.startedAt)).toBeGreaterThanOrEqual(Date.parse(previous.endedAt));
    }
    const [pull] = events;
    expect(pull!.bytes).toBe(stack.image.bytes);
    expect(pull!.attributes).toMatchObject({
      imageDigest: stack.image.digest,
      imageBytes: stack.image.bytes,
      layers: 1,
      cached: false,
    });
    expect(pull!.attributes!.fetchSeconds).toBeGreaterThanOrEqual(0);
    expect(pull!.attributes!.unpackSeconds).toBeGreaterThanOrEqual(0);
    const ready = events.at(-1)!;
    expect(ready.seconds).toBe(0);
    expect(ready.startedAt).toBe(ready.endedAt);

    // Tenant code runs confined (issue 23, finding 12): the OCI spec containerd holds has
    // no raw sockets, the default seccomp profile, and no new privileges.
    const info = JSON.parse(await ctr("containers", "info", req.replicaId)) as {
      Spec: {
        process: { noNewPrivileges?: boolean; capabilities: { bounding: string[] } };
        linux: { seccomp?: { defaultAction: string } };
      };
    };
    expect(info.Spec.process.capabilities.bounding).not.toContain("CAP_NET_RAW");
    expect(info.Spec.linux.seccomp?.defaultAction).toMatch(/^SCMP_ACT_(ERRNO|KILL)/);
    expect(info.Spec.process.noNewPrivileges).toBe(true);

    // The probe really got its 200 from busybox httpd inside the container.
    expect(started.readiness.status).toBe(200);
    const answer = await httpGet(
      `http://127.0.0.1:${stack.image.httpPort}${stack.image.readinessPath}`,
    );
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe("ready\n");
    expect(parseTaskList(await ctr("tasks", "ls")).get(req.replicaId)?.status).toBe("RUNNING");

    const inventory = await runtime.inventory();
    expect(inventory.images).toContainEqual({
      digest: stack.image.digest,
      bytes: stack.image.bytes,
      estargz: false,
    });
    expect(inventory.replicas).toContainEqual({
      replicaId: req.replicaId,
      containerId: req.replicaId,
      state: "running",
    });

    const stopped = await runtime.stopReplica(req.replicaId);
    expect(stopped).toMatchObject({ found: true, signal: "SIGKILL" });
    expect(parseTaskList(await ctr("tasks", "ls")).has(req.replicaId)).toBe(false);
    expect(await ctr("containers", "ls", "-q")).not.toContain(req.replicaId);
    expect(await ctr("snapshots", "ls")).not.toContain(req.replicaId);
    expect((await mountPointsUnder(stack.dir)).filter((m) => m.includes(req.replicaId))).toEqual(
      [],
    );
    await expect(httpGet(`http://127.0.0.1:${stack.image.httpPort}/ready`)).rejects.toThrow();
    expect(await runtime.stopReplica(req.replicaId)).toMatchObject({ found: false, signal: null });
  });

  it("moves no bytes when the node already holds the image", async () => {
    const events: PhaseEvent[] = [];
    const req = request({ warmup: undefined });
    await runtime.startReplica(req, (e) => events.push(e));
    expect(events.map((e) => e.phase)).toEqual(["pull", "create", "start", "ready"]);
    expect(events[0]).toMatchObject({ bytes: 0, attributes: { cached: true } });
    await runtime.stopReplica(req.replicaId);
  });

  it("reads over containerd's API what ctr reads: content, image, container snapshot, task state", async () => {
    const req = request({ warmup: undefined });
    await runtime.startReplica(req, () => undefined);
    const { api } = runtime.host;
    const ref = pinnedReference(stack.image.ref, stack.image.digest);
    const ctrContent = (await ctr("content", "ls", "-q")).trim().split("\n").sort();
    expect([...(await api.contentDigests())].sort()).toEqual(ctrContent);
    expect((await api.image(ref))?.target.digest).toBe(stack.image.digest);
    expect(await api.image(`${stack.registryHost}/thaw/none:v1`)).toBeUndefined();
    const manifest = await api.readContent(stack.image.digest);
    expect(manifest.toString("utf8")).toBe(await ctr("content", "get", stack.image.digest));
    expect(await api.container(req.replicaId)).toMatchObject({
      snapshotter: "overlayfs",
      snapshot_key: req.replicaId,
    });
    expect(await api.taskStatus(req.replicaId)).toBe("RUNNING");
    expect(parseTaskList(await ctr("tasks", "ls")).get(req.replicaId)?.status).toBe("RUNNING");
    await runtime.stopReplica(req.replicaId);
    expect(await api.taskStatus(req.replicaId)).toBeUndefined();
  });

  it("fails the start phase early, with the container's last log lines, when the task exits", async () => {
    const req = request({
      warmup: undefined,
      deployment: {
        imageRef: stack.image.ref,
        imageDigest: stack.image.digest,
        args: [
          "/bin/busybox",
          "sh",
          "-c",
          "echo 'RuntimeError: CUDA error: no device' >&2; exit 3",
        ],
      },
      readiness: {
        port: stack.image.httpPort,
        path: stack.image.readinessPath,
        timeoutSeconds: 60,
      },
    });
    const t0 = performance.now();
    const error = await runtime.startReplica(req, () => undefined).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PhaseFailedError);
    expect((error as PhaseFailedError).phase).toBe("start");
    expect((error as Error).message).toContain("the container's task exited before it was ready");
    expect((error as Error).message).toContain("RuntimeError: CUDA error: no device");
    expect(performance.now() - t0).toBeLessThan(30_000);
    expect(await ctr("containers", "ls", "-q")).not.toContain(req.replicaId);
  });

  it("parks a replica and hands it over on the warm path (real pause/resume)", async () => {
    const first = request({ warmup: undefined });
    await runtime.startReplica(first, () => undefined);
    await runtime.parkReplica({ replicaId: first.replicaId });
    expect(parseTaskList(await ctr("tasks", "ls")).get(first.replicaId)?.status).toBe("PAUSED");
    expect((await runtime.inventory()).warmReplicaIds).toEqual([first.replicaId]);

    const events: PhaseEvent[] = [];
    const second = request({ path: "warm", warmReplicaId: first.replicaId, warmup: undefined });
    const started = await runtime.startReplica(second, (e) => events.push(e));
    expect(events.map((e) => e.phase)).toEqual(["handover", "ready"]);
    expect(started.containerId).toBe(first.replicaId);
    expect(parseTaskList(await ctr("tasks", "ls")).get(first.replicaId)?.status).toBe("RUNNING");
    expect((await runtime.inventory()).warmReplicaIds).toEqual([]);

    await runtime.stopReplica(second.replicaId);
    expect(await ctr("containers", "ls", "-q")).not.toContain(first.replicaId);
  });

  it("force-removes a paused replica (the cleanup after a failed handover)", async () => {
    const req = request({ warmup: undefined });
    await runtime.startReplica(req, () => undefined);
    await runtime.parkReplica({ replicaId: req.replicaId });
    const removed = await runtime.host.removeContainer(req.replicaId, {
      graceSeconds: 0,
      force: true,
    });
    expect(removed).toEqual({ found: true, signal: "SIGKILL" });
    expect(parseTaskList(await ctr("tasks", "ls")).has(req.replicaId)).toBe(false);
    expect(await ctr("containers", "ls", "-q")).not.toContain(req.replicaId);
  });

  it("reports a failed pull with the phase and containerd's own words, and leaves nothing behind", async () => {
    const req = request({ deployment: { imageRef: `${stack.registryHost}/thaw/missing:v1` } });
    const error = await runtime.startReplica(req, () => undefined).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PhaseFailedError);
    expect((error as PhaseFailedError).phase).toBe("pull");
    expect((error as PhaseFailedError).message).toMatch(/pull the image.*not found/s);
    expect(await ctr("containers", "ls", "-q")).not.toContain(req.replicaId);
  });

  it("removes the container when the readiness probe never passes", async () => {
    const req = request({
      warmup: undefined,
      readiness: { port: stack.image.httpPort, path: "/missing", timeoutSeconds: 1 },
    });
    const error = await runtime.startReplica(req, () => undefined).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PhaseFailedError);
    expect((error as PhaseFailedError).phase).toBe("start");
    expect((error as PhaseFailedError).message).toMatch(
      /did not answer 200 within 1 s.*answered 404/s,
    );
    expect(await ctr("containers", "ls", "-q")).not.toContain(req.replicaId);
  });

  const specOf = async (id: string) =>
    ContainerInfo.parse(JSON.parse(await ctr("containers", "info", id)));
  const contextOf = (input: StartReplicaRequestInput): StartContext => ({
    host: runtime.host,
    request: StartReplicaRequest.parse(input),
    rec: new PhaseRecorder(() => undefined),
    signal: undefined,
    created: () => undefined,
  });
  const pinned = () => pinnedReference(stack.image.ref, stack.image.digest);
  /** The container a cold start of `input` creates (its task is not started: the extra
   * capabilities of a checkpointable container may exceed what this machine's root holds). */
  const coldContainer = async (input: StartReplicaRequestInput) => {
    await runtime.host.run(runtime.host.ctr.imagePull(pinned(), { plainHttp: true }), "pull");
    const spec = containerSpecFor(contextOf(input), pinned());
    await runtime.host.run(runtime.host.ctr.containerCreate(spec), "create");
    try {
      return await specOf(spec.id);
    } finally {
      await runtime.host.run(runtime.host.ctr.containerDelete(spec.id), "delete");
    }
  };

  it("confines a checkpointable container too: default seccomp widened only by CRIU's capabilities", async () => {
    const info = await coldContainer(
      request({
        deployment: {
          imageRef: stack.image.ref,
          imageDigest: stack.image.digest,
          checkpointable: true,
        },
      }),
    );
    const spec = info.Spec as {
      process: { noNewPrivileges?: boolean; capabilities: { bounding: string[] } };
      linux: {
        seccomp?: { defaultAction: string; syscalls: { names: string[]; action: string }[] };
      };
    };
    expect(spec.process.capabilities.bounding).not.toContain("CAP_NET_RAW");
    expect(spec.process.capabilities.bounding).toContain("CAP_CHECKPOINT_RESTORE");
    expect(spec.process.noNewPrivileges).toBe(true);
    expect(spec.linux.seccomp?.defaultAction).toMatch(/^SCMP_ACT_(ERRNO|KILL)/);
    const allowed = new Set(
      spec.linux
        .seccomp!.syscalls.filter((s) => s.action === "SCMP_ACT_ALLOW")
        .flatMap((s) => s.names),
    );
    // What CRIU's capabilities bring (CRIU works through them); syscalls of none stay out.
    for (const syscall of ["ptrace", "process_vm_readv", "kcmp", "setns", "open_by_handle_at"])
      expect(allowed).toContain(syscall);
    for (const syscall of ["init_module", "kexec_load", "reboot", "iopl"])
      expect(allowed).not.toContain(syscall);
  });

  it("builds a restored container with the cold path's spec, differing only in its own names", async () => {
    const deployment = {
      imageRef: stack.image.ref,
      imageDigest: stack.image.digest,
      env: { HF_HOME: "/models" },
    };
    const cold = await coldContainer(
      request({ deployment: { ...deployment, checkpointable: true } }),
    );
    const restore = request({
      path: "restore",
      deployment: {
        ...deployment,
        snapshot: {
          snapshotId: randomUUID(),
          checkpointRef: `${stack.registryHost}/thaw-snapshots@sha256:${"0".repeat(64)}`,
          sleepLevel: 2,
        },
      },
    });
    const rebuilt = await rebuiltContainer(contextOf(restore), pinned());
    // The probe is gone again: the restore creates the container under the same id.
    expect(await ctr("containers", "ls", "-q")).not.toContain(restore.replicaId);
    expect(rebuilt.Runtime.Name).toBe(cold.Runtime.Name);
    // Raw, the specs differ where they name the container (cgroup, labels)...
    expect(specDifferences(rebuilt.Spec, cold.Spec)).not.toEqual([]);
    // ... and nowhere else: capabilities, seccomp, mounts, env, hooks are the cold path's.
    const ours = comparableSpec(rebuilt.Spec, stack.namespace);
    const theirs = comparableSpec(cold.Spec, stack.namespace);
    expect([ours.problem, theirs.problem]).toEqual([null, null]);
    expect(specDifferences(ours.spec, theirs.spec)).toEqual([]);
  });

  it("restores only by the digest recorded at capture, and only a checkpoint", async () => {
    // CRIU cannot run on every machine that runs this test: a criu that passes `criu check`
    // stands in for the preflight, and no restore gets as far as CRIU here.
    const dir = await mkdtemp(path.join(os.tmpdir(), "thaw-restore-it-"));
    await writeFile(path.join(dir, "criu"), '#!/bin/sh\necho "Looks good."\n');
    await chmod(path.join(dir, "criu"), 0o755);
    await mkdir(path.join(dir, "kernel"));
    await writeFile(path.join(dir, "kernel", "io_uring_disabled"), "2\n");
    const restoring = new ContainerdRuntime({
      address: stack.address,
      namespace: stack.namespace,
      logDir: stack.logDir,
      plainHttpRegistries: [stack.registryHost],
      tools: { criu: path.join(dir, "criu") },
      procSysDir: dir,
    });
    const repository = pinnedReference(stack.image.ref, undefined).replace(/:[^/:]+$/, "");
    const restore = (checkpointRef: string) =>
      request({
        path: "restore",
        warmup: undefined,
        deployment: {
          imageRef: stack.image.ref,
          imageDigest: stack.image.digest,
          snapshot: { snapshotId: randomUUID(), checkpointRef, sleepLevel: 2 },
        },
      });

    // Not the digest the capture recorded: containerd resolves by digest, the store has none.
    const unknown = restore(`${repository}@sha256:${"0".repeat(64)}`);
    const missing = await restoring.startReplica(unknown, () => undefined).catch((e: unknown) => e);
    expect(missing).toMatchObject({ phase: "fetch_snapshot" });
    expect((missing as Error).message).toMatch(
      /fetch the snapshot from the snapshot store.*not found/s,
    );

    // A digest the store has, but of an image and not a checkpoint: fetched, then refused.
    const image = restore(`${repository}@${stack.image.digest}`);
    const refused = await restoring.startReplica(image, () => undefined).catch((e: unknown) => e);
    expect(refused).toMatchObject({ phase: "restore" });
    expect((refused as Error).message).toContain(
      `refusing to restore checkpoint ${stack.image.digest}`,
    );
    for (const req of [unknown, image])
      expect(await ctr("containers", "ls", "-q")).not.toContain(req.replicaId);
    expect(parseTaskList(await ctr("tasks", "ls")).size).toBe(0);
  });

  it("stages an image's weight files through a read-only mount, and leaves no mount or snapshot", async () => {
    await runtime
      .startReplica(request({ warmup: undefined }), () => undefined)
      .then((s) => runtime.stopReplica(s.containerId));
    const snapshotsBefore = await ctr("snapshots", "ls");
    const stagingDir = await mkdtemp(path.join(os.tmpdir(), "thaw-staging-"));
    // The probe image holds no weights: its busybox binary stands in for one.
    const busybox = (await stat("/bin/busybox")).size;
    // Pulled as the restore's base image is: pinned by digest.
    const pinned = pinnedReference(stack.image.ref, stack.image.digest);
    const staged = await stageImageWeights(runtime.host, pinned, {
      stagingDir,
      files: /^busybox$/,
    });
    expect(staged).toMatchObject({ files: 1, bytes: busybox });
    expect(await stageImageWeights(runtime.host, pinned, { stagingDir })).toMatchObject({
      files: 0,
      bytes: 0,
    });
    expect(await mountPointsUnder(stagingDir)).toEqual([]);
    expect(await ctr("snapshots", "ls")).toBe(snapshotsBefore);
  });

  it("captures a deployment's kernel cache into the registry, and a start on an empty node fetches it by digest", async () => {
    const deploymentId = randomUUID();
    const kernelCacheId = randomUUID();
    const cacheDir = path.join(stack.dir, "kernel-caches", deploymentId);
    const tag = `${stack.registryHost}/thaw-kernel-caches:${deploymentId}`;
    const deployment = { imageRef: stack.image.ref, imageDigest: stack.image.digest, deploymentId };
    const inside = async (replicaId: string, script: string) =>
      ctr(
        "tasks",
        "exec",
        "--exec-id",
        `sh-${randomUUID()}`,
        replicaId,
        "/bin/busybox",
        "sh",
        "-c",
        script,
      );

    const first = request({
      warmup: undefined,
      deployment,
      kernelCache: { capture: { kernelCacheId, ref: tag } },
    });
    await runtime.startReplica(first, () => undefined);
    // The engine compiles into its cache variables: here, what it writes lands in the
    // deployment's directory on the host.
    await inside(
      first.replicaId,
      'mkdir -p "$TRITON_CACHE_DIR/ab12" "$VLLM_CACHE_ROOT/torch_compile_cache" && echo cubin > "$TRITON_CACHE_DIR/ab12/kernel.cubin" && echo graph > "$VLLM_CACHE_ROOT/torch_compile_cache/model"',
    );
    const captured = await runtime.captureKernelCache(
      first.replicaId,
      StartReplicaRequest.parse(first),
      { kernelCacheId, ref: tag },
    );
    expect(captured.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(captured.bytes).toBeGreaterThan(0);
    // Pushed (the registry serves the manifest by that digest), and not kept as an image here.
    const manifest = await httpGet(
      `http://${stack.registryHost}/v2/thaw-kernel-caches/manifests/${captured.digest}`,
      { accept: "application/vnd.oci.image.manifest.v1+json" },
    );
    expect(manifest.status).toBe(200);
    expect(JSON.parse(manifest.body.toString())).toMatchObject({
      layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar", size: captured.bytes }],
    });
    expect(await ctr("images", "ls", "-q")).not.toContain("thaw-kernel-caches");
    await runtime.stopReplica(first.replicaId);

    // Another node has none of it: an empty directory, filled from the store before create.
    await rm(cacheDir, { recursive: true });
    const second = request({
      warmup: undefined,
      deployment,
      kernelCache: {
        fetch: {
          kernelCacheId,
          ref: `${stack.registryHost}/thaw-kernel-caches@${captured.digest}`,
          bytes: captured.bytes,
        },
      },
    });
    const events: PhaseEvent[] = [];
    await runtime.startReplica(second, (e) => events.push(e));
    expect(events.map((e) => e.phase)).toEqual([
      "pull",
      "fetch_kernel_cache",
      "create",
      "start",
      "ready",
    ]);
    expect(events[1]).toMatchObject({ bytes: captured.bytes, attributes: { kernelCacheId } });
    expect(await inside(second.replicaId, 'cat "$TRITON_CACHE_DIR/ab12/kernel.cubin"')).toBe(
      "cubin\n",
    );
    expect(await ctr("images", "ls", "-q")).not.toContain("thaw-kernel-caches");
    expect((await runtime.inventory()).images.map((i) => i.digest)).not.toContain(captured.digest);
    await runtime.stopReplica(second.replicaId);
  });

  it("accepts the GPU hosts' containerd config (infra/agent/containerd/config.toml)", async () => {
    const config = fileURLToPath(
      new URL("../../../../../infra/agent/containerd/config.toml", import.meta.url),
    );
    const dump = await runTool(
      { file: "containerd", args: ["--config", config, "config", "dump"] },
      { what: "load the config", timeoutMs: 15_000 },
    );
    expect(dump.stdout).toMatch(
      /\[proxy_plugins\.stargz\]\s+address = "[^"]+"\s+type = "snapshot"/,
    );
    expect(dump.stdout).toContain('disabled_plugins = ["io.containerd.grpc.v1.cri"]');
  });
});
