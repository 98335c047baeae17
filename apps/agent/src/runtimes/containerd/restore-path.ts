import { engineCall } from "../replica-http.ts";
import { referencedBlobs, pinnedReference } from "./image-blobs.ts";
import { type ContainerdHost } from "./host.ts";
import { type PathOutcome, type StartContext } from "./start-context.ts";

/**
 * restore (field notes §3): fetch the checkpoint image if the node lacks it; CRIU-restore the
 * container through containerd (`ctr containers restore --live --rw`; runc reads the CRIU
 * options from the file the container's org.criu.config annotation names); move each CUDA
 * process's state back to the GPU (`cuda-checkpoint --toggle --pid`); wake the engine and
 * reload its weights (load_weights); warmup; ready.
 */
export async function startByRestore(
  ctx: StartContext,
  preflight: () => Promise<void>,
): Promise<PathOutcome> {
  const { host, request, rec, signal } = ctx;
  const snapshot = request.deployment.snapshot;
  if (!snapshot) throw new Error("the restore path needs a snapshot");
  const containerId = request.replicaId;
  const opts = signal ? { signal } : {};

  await preflight();

  const local = await host.imageRefs(signal);
  const baseRef = pinnedReference(request.deployment.imageRef, request.deployment.imageDigest);
  if (!local.has(snapshot.checkpointRef) || !local.has(baseRef)) {
    await rec.run("fetch_snapshot", async (scope) => {
      const before = await host.contentDigests(signal);
      if (!local.has(snapshot.checkpointRef)) {
        await host.run(
          host.ctr.checkpointFetch(snapshot.checkpointRef, snapshot.snapshotId, {
            plainHttp: host.plainHttp(snapshot.checkpointRef),
          }),
          "fetch the snapshot from the snapshot store",
          { timeout: "fetchSnapshotSeconds", ...opts },
        );
      }
      // The checkpoint carries the rw layer, not the image: the base image must be local too.
      if (!local.has(baseRef)) {
        await host.run(
          host.ctr.imagePull(baseRef, { plainHttp: host.plainHttp(baseRef) }),
          "pull the snapshot's base image",
          {
            timeout: "pullSeconds",
            ...opts,
          },
        );
        scope.attributes.baseImagePulled = true;
      }
      scope.bytes = await fetchedBytes(host, [snapshot.checkpointRef, baseRef], before, signal);
      scope.attributes.checkpointRef = snapshot.checkpointRef;
    });
  }

  await rec.run("restore", async (scope) => {
    const restored = await host.run(
      host.ctr.containerRestore(containerId, snapshot.checkpointRef),
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

  // Wake and reload, then the probe: the engine serves again once its weights are back.
  const probe = await rec.run("load_weights", async (scope) => {
    const timeoutMs = host.config.timeouts.engineCallSeconds * 1000;
    const port = request.readiness.port;
    scope.attributes.sleepLevel = snapshot.sleepLevel;
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
