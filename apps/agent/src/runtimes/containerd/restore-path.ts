import { engineCall } from "../replica-http.ts";
import {
  CheckpointIndex,
  checkpointProblems,
  ContainerInfo,
  type CheckpointBlobs,
} from "./checkpoint-spec.ts";
import { LABEL_SNAPSHOT } from "./commands.ts";
import { type ContainerdHost } from "./host.ts";
import { referencedBlobs, pinnedReference } from "./image-blobs.ts";
import { restoreFromPeerRefusal } from "./model-express.ts";
import { parseImageList } from "./parse.ts";
import { stageImageWeights, type StagedWeights } from "./stage-weights.ts";
import { kernelCacheDirFor } from "./kernel-cache.ts";
import { containerSpecFor, type PathOutcome, type StartContext } from "./start-context.ts";

/**
 * restore (field notes §3): fetch the checkpoint image by the digest its capture recorded if
 * the node lacks it, and check the fetched manifest is that digest; build the container the
 * cold path's way and refuse the checkpoint unless its spec, runtime and image are that
 * container's (checkpoint-spec.ts: ctr can only restore a container from the checkpoint's own
 * spec); CRIU-restore it through containerd (`ctr containers restore --live --rw`; runc reads
 * the CRIU options from the file the container's org.criu.config annotation names); move each
 * CUDA process's state back to the GPU (`cuda-checkpoint --toggle --pid`); wake the engine and
 * reload its weights (load_weights); warmup; ready. A sleep-level-2 checkpoint has its weights
 * staged apart while CRIU works (stage-weights.ts), so the engine's reload reads memory.
 *
 * Weights from a peer (a level-2 restore with `peerSource`): the checkpointed engine was
 * started with `--load-format modelexpress` (restoreFromPeerRefusal says why it must have
 * been), so the same reload call loads through ModelExpress and a serving replica sends the
 * weights into the woken engine's memory. Nothing is staged from this host's files then
 * (`stageWeights` is ignored: the reload does not read them), and the wake-and-reload phase
 * is `peer_transfer` where it is otherwise `load_weights`, as the cold-start model has it.
 */
export async function startByRestore(
  ctx: StartContext,
  preflight: () => Promise<void>,
): Promise<PathOutcome> {
  const { host, request, rec, signal } = ctx;
  const snapshot = request.deployment.snapshot;
  if (!snapshot) throw new Error("the restore path needs a snapshot");
  const fromPeer = request.peerSource !== undefined;
  if (fromPeer) {
    const refusal = restoreFromPeerRefusal(host.config.modelExpress, request);
    if (refusal) throw new Error(refusal);
  }
  const opts = signal ? { signal } : {};
  const wantedDigest = snapshot.checkpointRef.slice(snapshot.checkpointRef.indexOf("@") + 1);

  await preflight();

  // A checkpoint this node captured or fetched before: found by its digest, whatever name
  // (the capture's tag, or repo@digest) it is kept under.
  const listed = parseImageList(
    (await host.run(host.ctr.imageList(), "list the images", opts)).stdout,
  );
  const held = listed.find(
    (i) => i.digest === wantedDigest && i.labels[LABEL_SNAPSHOT] === snapshot.snapshotId,
  );
  let checkpointRef = held?.ref ?? snapshot.checkpointRef;
  const baseRef = pinnedReference(request.deployment.imageRef, request.deployment.imageDigest);
  const baseHeld = listed.some((i) => i.ref === baseRef);
  if (!held || !baseHeld) {
    await rec.run("fetch_snapshot", async (scope) => {
      const before = await host.contentDigests(signal);
      if (!held) {
        await host.run(
          host.ctr.checkpointFetch(snapshot.checkpointRef, snapshot.snapshotId, {
            plainHttp: host.plainHttp(snapshot.checkpointRef),
          }),
          "fetch the snapshot from the snapshot store",
          { timeout: "fetchSnapshotSeconds", ...opts },
        );
        // containerd resolves repo@digest by that digest; the image it recorded must be it.
        const fetched = await host.imageDigest(snapshot.checkpointRef, signal);
        if (fetched !== wantedDigest) {
          throw new Error(
            `the snapshot store served ${fetched} for ${snapshot.checkpointRef}: refusing a checkpoint that is not the one captured`,
          );
        }
        checkpointRef = snapshot.checkpointRef;
      }
      // The checkpoint carries the rw layer, not the image: the base image must be local too.
      if (!baseHeld) {
        await host.registryPull(
          baseRef,
          ctx.request.registryAuth,
          (hostsDir) =>
            host.ctr.imagePull(baseRef, {
              plainHttp: host.plainHttp(baseRef),
              ...(hostsDir && { hostsDir }),
            }),
          "pull the snapshot's base image",
          {
            timeout: "pullSeconds",
            ...opts,
          },
        );
        scope.attributes.baseImagePulled = true;
      }
      scope.bytes = await fetchedBytes(host, [checkpointRef, baseRef], before, signal);
      scope.attributes.checkpointRef = snapshot.checkpointRef;
    });
  }

  // Only a level-2 image lacks its weights, only an engine that reloads them needs them read,
  // and the scheduler asks where it pays (weightsStagingPays): staged from now, while CRIU
  // works; awaited before the reload, stopped on failure.
  const stopStaging = new AbortController();
  const onAbort = () => stopStaging.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  const staging =
    snapshot.sleepLevel === 2 && snapshot.reloadWeights && snapshot.stageWeights && !fromPeer
      ? stageImageWeights(host, baseRef, {
          stagingDir: host.config.stagingDir,
          signal: stopStaging.signal,
        }).catch((error: unknown) => ({
          error: error instanceof Error ? error.message : String(error),
        }))
      : undefined;
  try {
    return await restoreAndWake(ctx, { wantedDigest, baseRef, checkpointRef }, staging);
  } finally {
    signal?.removeEventListener("abort", onAbort);
    stopStaging.abort();
    await staging;
  }
}

async function restoreAndWake(
  ctx: StartContext,
  image: { wantedDigest: string; baseRef: string; checkpointRef: string },
  staging: Promise<StagedWeights | { error: string }> | undefined,
): Promise<PathOutcome> {
  const { host, request, rec, signal } = ctx;
  const snapshot = request.deployment.snapshot!;
  const { wantedDigest, baseRef, checkpointRef } = image;
  const containerId = request.replicaId;
  const opts = signal ? { signal } : {};

  await rec.run("restore", async (scope) => {
    await verifyCheckpoint(ctx, wantedDigest, baseRef);
    const restored = await host.run(
      host.ctr.containerRestore(containerId, checkpointRef),
      "restore the container from its checkpoint (CRIU)",
      {
        timeout: "restoreSeconds",
        ...opts,
        hint: "CRIU's restore.log is in the task's work directory under containerd's state dir; the CRIU options are in infra/agent/criu/runc.conf",
      },
    );
    ctx.created(containerId);
    scope.attributes.criuSeconds = restored.seconds;
    const toggled = await toggleCuda(host, containerId, "checkpointed", signal);
    scope.attributes.cudaProcesses = toggled.pids;
    scope.attributes.cudaToggleSeconds = toggled.seconds;
    if (request.gpus.length > 0 && toggled.pids === 0) {
      throw new Error(
        "no process of the restored container had checkpointed CUDA state to move back to the GPU",
      );
    }
  });

  // Wake and reload, then the probe: the engine serves again once its weights are back (from
  // this host's files, or sent by the peer the reload finds through ModelExpress).
  const peer = request.peerSource;
  const probe = await rec.run(peer ? "peer_transfer" : "load_weights", async (scope) => {
    const timeoutMs = host.config.timeouts.engineCallSeconds * 1000;
    const port = request.readiness.port;
    scope.attributes.sleepLevel = snapshot.sleepLevel;
    if (peer) {
      Object.assign(scope.attributes, {
        weightsFrom: "peer",
        sourceNode: peer.nodeName,
        sourceReplicaId: peer.replicaId,
        rdma: peer.rdma,
      });
    }
    const staged = await staging;
    if (staged && "error" in staged) scope.attributes.stagingError = staged.error;
    else if (staged) {
      scope.attributes.stagedFiles = staged.files;
      scope.attributes.stagedBytes = staged.bytes;
      scope.attributes.stagingSeconds = staged.seconds;
    }
    scope.attributes.wakeSeconds = await engineCall(port, snapshot.wake, {
      what: "wake the engine",
      timeoutMs,
      ...opts,
    });
    if (snapshot.reloadWeights) {
      scope.attributes.reloadSeconds = await engineCall(port, snapshot.reloadWeights, {
        what: "reload the weights",
        timeoutMs,
        ...opts,
      });
    }
    const result = await host.probe(containerId, request.readiness, signal);
    scope.attributes.probeAttempts = result.attempts;
    return result;
  });

  await host.warmupAndReady(rec, request.readiness.port, request.warmup, signal);
  return { containerId, probe };
}

/**
 * The container a cold start of this request would create — checkpointable, as a captured
 * container was — created, read back (`ctr containers info`) and removed again: the spec
 * containerd builds from the agent's own flags, which the checkpoint's must equal.
 */
export async function rebuiltContainer(
  ctx: StartContext,
  baseRef: string,
  options: { kernelCache?: boolean } = {},
): Promise<ContainerInfo> {
  const { host, signal } = ctx;
  const opts = signal ? { signal } : {};
  const spec = {
    ...containerSpecFor(ctx, baseRef, undefined, options),
    checkpointable: { criuConfigPath: host.config.criuConfigPath },
  };
  await host.run(host.ctr.containerCreate(spec), "build the container the restore must match", {
    timeout: "createSeconds",
    ...opts,
    hint: `If a container ${spec.id} already exists, stop that replica first`,
  });
  ctx.created(spec.id);
  try {
    const info = await host.run(host.ctr.containerInfo(spec.id), "read the rebuilt spec", opts);
    return ContainerInfo.parse(JSON.parse(info.stdout));
  } finally {
    await host.run(host.ctr.containerDelete(spec.id), "remove the rebuilt container", opts);
  }
}

/** Refuses the checkpoint (by digest) unless it would restore exactly the rebuilt container. */
async function verifyCheckpoint(ctx: StartContext, digest: string, baseRef: string) {
  const { host, request, signal } = ctx;
  const opts = signal ? { signal } : {};
  const read = async (blob: string) =>
    (await host.run(host.ctr.contentGet(blob), `read ${blob}`, opts)).stdoutBytes;
  let parsed: unknown;
  try {
    parsed = JSON.parse((await read(digest)).toString("utf8"));
  } catch {
    parsed = undefined;
  }
  const index = CheckpointIndex.safeParse(parsed);
  if (!index.success)
    throw new Error(`refusing to restore checkpoint ${digest}: it is not a checkpoint index`);
  const blobs: CheckpointBlobs = {
    index: index.data,
    read: async (mediaType) => {
      const blob = index.data.manifests.find((m) => m.mediaType === mediaType);
      return blob ? read(blob.digest) : undefined;
    },
  };
  const { deployment } = request;
  const imageRefs = [
    baseRef,
    ...(deployment.estargzImageRef
      ? [pinnedReference(deployment.estargzImageRef, deployment.estargzImageDigest)]
      : []),
  ];
  const problemsAgainst = async (rebuilt: ContainerInfo) =>
    checkpointProblems(blobs, { imageRefs, rebuilt, namespace: host.config.namespace });
  let problems = await problemsAgainst(await rebuiltContainer(ctx, baseRef));
  // A checkpoint captured before this agent mounted kernel-cache directories is the container
  // such an agent built: held against that one, it restores (without the mount) rather than
  // failing until its snapshot is quarantined. Anything else that differs still refuses it.
  if (problems.length > 0 && kernelCacheDirFor(host, request) !== undefined) {
    const legacy = await problemsAgainst(
      await rebuiltContainer(ctx, baseRef, { kernelCache: false }),
    );
    if (legacy.length === 0) problems = legacy;
  }
  if (problems.length > 0) {
    throw new Error(
      `refusing to restore checkpoint ${digest}: ${problems.join("; ")} (a restored container must be the one a cold start builds)`,
    );
  }
}

/**
 * Toggles the CUDA state of every process of a container that is in `from` state
 * (cuda-checkpoint --get-state fails for processes without CUDA: those are skipped).
 */
export async function toggleCuda(
  host: ContainerdHost,
  containerId: string,
  from: "running" | "checkpointed",
  signal: AbortSignal | undefined,
): Promise<{ pids: number; seconds: number }> {
  const t0 = performance.now();
  const opts = signal ? { signal } : {};
  let pids = 0;
  for (const pid of await host.taskProcesses(containerId, signal)) {
    let state: string;
    try {
      state = (
        await host.run(host.cuda.getState(pid), `read the CUDA state of pid ${pid}`, opts)
      ).stdout.trim();
    } catch {
      continue;
    }
    if (state !== from) continue;
    await host.run(
      host.cuda.toggle(pid),
      `toggle the CUDA state of pid ${pid} (${from} → ${from === "running" ? "checkpointed" : "running"})`,
      {
        timeout: "cudaToggleSeconds",
        ...opts,
        hint: "A snapshot restores only on the GPU model, driver and CUDA version it was captured on",
      },
    );
    pids++;
  }
  return { pids, seconds: (performance.now() - t0) / 1000 };
}

async function fetchedBytes(
  host: ContainerdHost,
  refs: string[],
  before: Set<string>,
  signal: AbortSignal | undefined,
): Promise<number> {
  const sizes = new Map<string, number>();
  for (const ref of refs) {
    const digest = await host.imageDigest(ref, signal);
    for (const blob of await referencedBlobs(async (d) => {
      const { stdout } = await host.run(
        host.ctr.contentGet(d),
        `read ${d}`,
        signal ? { signal } : {},
      );
      return stdout;
    }, digest)) {
      if (!before.has(blob.digest)) sizes.set(blob.digest, blob.size);
    }
  }
  return [...sizes.values()].reduce((s, n) => s + n, 0);
}
