import { remotePull } from "./commands.ts";
import { pinnedReference } from "./image-blobs.ts";
import { parseStargzPrefetch } from "./parse.ts";
import { credentialFor, writeDockerConfigAuth } from "./registry-auth.ts";
import { fetchStoredKernelCache } from "./kernel-cache.ts";
import { containerSpecFor, type PathOutcome, type StartContext } from "./start-context.ts";

/**
 * lazy: `ctr-remote images rpull` through the stargz snapshotter. Only the manifest, config and
 * each layer's table of contents are fetched; mounting each layer prefetches the files recorded
 * as landmarks (in prefetch_chunk_size requests, within prefetch_timeout_sec — config.toml), and
 * every other read is fetched lazily in chunk_size ranges. Then, as for pull, a stored kernel
 * cache's fetch when the start carries one, create (stargz snapshotter), start, warmup, ready.
 */
export async function startLazily(ctx: StartContext): Promise<PathOutcome> {
  const { host, request, rec, signal } = ctx;
  const { deployment } = request;
  const estargzRef = deployment.estargzImageRef;
  if (!estargzRef) throw new Error("the lazy path needs the deployment's eStargz image");
  const ref = pinnedReference(estargzRef, deployment.estargzImageDigest);
  const stargz = host.config.stargz;

  await rec.run("prefetch", async (scope) => {
    // containerd-stargz-grpc fetches the layers itself, now and lazily later: it reads the
    // credential from its docker config (registry-auth.ts); ctr-remote gets it for the manifest.
    const credential = credentialFor(ref, request.registryAuth);
    if (credential) await writeDockerConfigAuth(stargz.dockerConfigPath, credential);
    const pulled = await host.registryPull(
      ref,
      request.registryAuth,
      (hostsDir) =>
        remotePull(host.config.tools, host.config, ref, {
          plainHttp: host.plainHttp(ref),
          snapshotter: stargz.snapshotter,
          ...(hostsDir && { hostsDir }),
        }),
      "pull the eStargz image through the stargz snapshotter",
      {
        timeout: "remotePullSeconds",
        ...(signal ? { signal } : {}),
        hint: `Check that containerd-stargz-grpc runs and is registered in containerd's config as proxy snapshotter "${stargz.snapshotter}" (infra/agent/containerd/config.toml), and its log for "context deadline exceeded" (prefetch budget, infra/agent/containerd-stargz-grpc/config.toml)`,
      },
    );
    const digest = await host.imageDigest(ref, signal);
    if (deployment.estargzImageDigest && digest !== deployment.estargzImageDigest) {
      throw new Error(
        `registry served ${digest} for ${ref}, expected ${deployment.estargzImageDigest}`,
      );
    }
    const image = await host.imageBlobs(digest, signal);
    Object.assign(scope.attributes, {
      imageRef: ref,
      imageDigest: digest,
      registryCredential: pulled.credential,
      imageBytes: image.totalBytes,
      layers: image.layerDigests.length,
      rpullSeconds: pulled.seconds,
      prefetchTimeoutSeconds: stargz.prefetchTimeoutSeconds,
    });
    if (stargz.metricsUrl) {
      const prefetch = await prefetchOutcome(stargz.metricsUrl, image.layerDigests, signal);
      if (prefetch) {
        Object.assign(scope.attributes, {
          prefetchCompletedLayers: prefetch.completedLayers,
          prefetchComplete: prefetch.completedLayers === image.layerDigests.length,
          prefetchMaxSeconds: prefetch.maxMilliseconds / 1000,
        });
      }
    }
  });

  // A stored kernel cache, when the start says so: after the image, before the container.
  const fetchedCache = await fetchStoredKernelCache(ctx);
  const probe = await host.runAndProbe(
    rec,
    containerSpecFor(ctx, ref, stargz.snapshotter),
    request.readiness,
    request.warmup,
    signal,
    () => ctx.created(request.replicaId),
    fetchedCache,
  );
  return { containerId: request.replicaId, probe };
}

/** Best effort: the metrics only inform the cold start record, they never fail a start. */
async function prefetchOutcome(
  metricsUrl: string,
  layerDigests: string[],
  signal: AbortSignal | undefined,
): Promise<{ completedLayers: number; maxMilliseconds: number } | undefined> {
  try {
    const timeout = AbortSignal.timeout(2_000);
    const response = await fetch(metricsUrl, {
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    if (!response.ok) return undefined;
    return parseStargzPrefetch(await response.text(), layerDigests);
  } catch {
    return undefined;
  }
}
