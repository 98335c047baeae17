import { PullOutputWatcher } from "./parse.ts";
import { pinnedReference } from "./image-blobs.ts";
import { containerSpecFor, type PathOutcome, type StartContext } from "./start-context.ts";

/**
 * pull: `ctr images pull` (fetch every layer, decompress, unpack into overlayfs), then
 * create, start, warmup, ready. The pull phase's bytes are the blobs this pull actually
 * fetched (zero when the node already held the image).
 */
export async function startByPull(ctx: StartContext): Promise<PathOutcome> {
  const { host, request, rec, signal } = ctx;
  const { deployment } = request;
  const ref = pinnedReference(deployment.imageRef, deployment.imageDigest);

  let before: Set<string> = new Set();
  let digest = "";
  await rec.run(
    "pull",
    async (scope) => {
      before = await host.contentDigests(signal);
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
          ...(signal ? { signal } : {}),
          onStdout: (chunk) => watcher.push(chunk),
          hint: "Check that the node reaches the registry and the reference exists; a registry on plain HTTP must be listed in plainHttpRegistries",
        },
      );
      const t1 = performance.now();
      digest = watcher.imageDigest ?? (await host.imageDigest(ref, signal));
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
      const image = await host.imageBlobs(digest, signal);
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

  const probe = await host.createAndStart(
    rec,
    containerSpecFor(ctx, ref),
    request.readiness,
    request.warmup,
    signal,
    () => ctx.created(request.replicaId),
  );
  return { containerId: request.replicaId, probe };
}
