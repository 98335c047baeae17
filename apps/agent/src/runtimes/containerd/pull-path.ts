import { imageBlobs, pinnedReference } from "./image-blobs.ts";
import { PullOutputWatcher } from "./parse.ts";
import { fetchStoredKernelCache } from "./kernel-cache.ts";
import { containerSpecFor, type PathOutcome, type StartContext } from "./start-context.ts";

/**
 * pull: `ctr images pull` (fetch every layer, decompress, unpack into overlayfs), then
 * `ctr run -d` (create the container, start its task), the readiness probe, warmup, ready: the
 * same two processes as a plain `ctr images pull` + `ctr run -d` (and, between them, a stored
 * kernel cache's fetch when the start carries one: kernel-cache.ts). Everything else goes over
 * containerd's API (api/containerd-api.ts): the content store before and after, the image
 * record, the task's state while the probe waits. The pull phase's bytes are the blobs this
 * pull actually fetched (zero when the node already held the image).
 *
 * Why ctr still moves the bytes: the agent did its own pull over the API too (commit 129ebac)
 * and measured it against ctr on the same 316 MB image: the agent's process spent ~3.5 ms of
 * CPU per MB (HTTP, gRPC framing, garbage collection; one thread) where ctr spends ~1.5 ms
 * spread over cores: 1.11x slower here, and capped near 300 MB/s per agent, under the
 * 1,000 MiB/s disks a model image lands on. The process costs ~20 ms once per pull. Why ctr
 * still builds the container: its spec (containerd's default seccomp profile for the final
 * capability set, the NVIDIA hooks) is containerd's own Go code, which a copy would drift from.
 */
export async function startByPull(ctx: StartContext): Promise<PathOutcome> {
  const { host, request, rec, signal } = ctx;
  const { deployment } = request;
  const ref = pinnedReference(deployment.imageRef, deployment.imageDigest);
  const call = signal ? { signal } : {};

  let before: Set<string> = new Set();
  let digest = "";
  await rec.run(
    "pull",
    async (scope) => {
      before = await host.api.contentDigests(call);
      const watcher = new PullOutputWatcher();
      const t0 = performance.now();
      const pulled = await host.registryPull(
        ref,
        request.registryAuth,
        (hostsDir) =>
          host.ctr.imagePull(ref, {
            plainHttp: host.plainHttp(ref),
            ...(hostsDir && { hostsDir }),
          }),
        "pull the image",
        {
          timeout: "pullSeconds",
          ...call,
          onStdout: (chunk) => watcher.push(chunk),
          hint: "Check that the node reaches the registry and the reference exists; a registry on plain HTTP must be listed in plainHttpRegistries",
        },
      );
      const t1 = performance.now();
      digest = watcher.imageDigest ?? (await host.api.image(ref, call))?.target.digest ?? "";
      if (!digest) throw new Error(`image ${ref} is not in containerd after the pull`);
      if (deployment.imageDigest && digest !== deployment.imageDigest) {
        throw new Error(`registry served ${digest} for ${ref}, expected ${deployment.imageDigest}`);
      }
      const unpackStart = watcher.unpackStartedAt ?? t1;
      Object.assign(scope.attributes, {
        imageRef: ref,
        imageDigest: digest,
        registryCredential: pulled.credential,
        fetchSeconds: (unpackStart - t0) / 1000,
        unpackSeconds: watcher.unpackSeconds ?? (t1 - unpackStart) / 1000,
      });
    },
    // Counting the bytes is bookkeeping: it overlaps container create instead of delaying it.
    async (scope) => {
      const image = await imageBlobs(
        async (d) => (await host.api.readContent(d, call)).toString("utf8"),
        digest,
      );
      scope.bytes = image.blobs
        .filter((b) => !before.has(b.digest))
        .reduce((s, b) => s + b.size, 0);
      Object.assign(scope.attributes, {
        imageBytes: image.totalBytes,
        layers: image.layerDigests.length,
        cached: scope.bytes === 0,
      });
    },
  );

  // A stored kernel cache, when the start says so: after the image, before the container.
  const fetchedCache = await fetchStoredKernelCache(ctx);
  const probe = await host.runAndProbe(
    rec,
    containerSpecFor(ctx, ref),
    request.readiness,
    request.warmup,
    signal,
    () => ctx.created(request.replicaId),
    fetchedCache,
  );
  return { containerId: request.replicaId, probe };
}
