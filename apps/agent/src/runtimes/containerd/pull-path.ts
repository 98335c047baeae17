import { pinnedReference } from "./image-blobs.ts";
import { containerSpecFor, type PathOutcome, type StartContext } from "./start-context.ts";

/**
 * pull: the agent pulls over containerd's API (fetch every layer, unpack into overlayfs:
 * api/api-pull.ts), then create (`ctr containers create`: containerd's own spec builder, with
 * its default seccomp profile), start over the API, warmup, ready. The pull phase's bytes are
 * the blobs this pull actually fetched (zero when the node already held the image).
 */
export async function startByPull(ctx: StartContext): Promise<PathOutcome> {
  const { host, request, rec, signal } = ctx;
  const { deployment } = request;
  const ref = pinnedReference(deployment.imageRef, deployment.imageDigest);

  await rec.run("pull", async (scope) => {
    const pulled = await host.apiPull(ref, request.registryAuth, signal);
    if (deployment.imageDigest && pulled.root.digest !== deployment.imageDigest) {
      throw new Error(
        `registry served ${pulled.root.digest} for ${ref}, expected ${deployment.imageDigest}`,
      );
    }
    scope.bytes = pulled.fetchedBytes;
    Object.assign(scope.attributes, {
      imageRef: ref,
      imageDigest: pulled.root.digest,
      registryCredential: pulled.credential,
      fetchSeconds: pulled.fetchSeconds,
      unpackSeconds: pulled.unpackSeconds,
      imageBytes: pulled.blobs.reduce((sum, b) => sum + b.size, 0),
      layers: pulled.layers,
      cached: pulled.fetchedBytes === 0,
    });
  });

  const probe = await host.createAndStart(
    rec,
    containerSpecFor(ctx, ref),
    request.readiness,
    request.warmup,
    signal,
    () => ctx.created(request.replicaId),
    host.apiTasks,
  );
  return { containerId: request.replicaId, probe };
}
