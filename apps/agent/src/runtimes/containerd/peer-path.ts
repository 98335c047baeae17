import { startLazily } from "./lazy-path.ts";
import { peerRefusal } from "./model-express.ts";
import { startByPull } from "./pull-path.ts";
import { type PathOutcome, type StartContext } from "./start-context.ts";

/**
 * peer: the image as the lazy path mounts its eStargz variant when the scheduler says so
 * (`peerSource.lazyImage`: the weights layers are then never fetched), else as the pull path
 * fetches it, its
 * engine started with `--load-format modelexpress` (containerSpecFor): it finds the serving
 * replicas through the operator's ModelExpress server and receives their weights over NIXL
 * (GPU to GPU on EFA, else UCX over TCP) and their kernel caches, falling back to storage when
 * no source answers. The copy happens inside the engine, before it answers its readiness
 * probe: on this runtime it is part of the `start` phase (the sim runtime, which models it,
 * reports `peer_transfer` and `fetch_kernel_cache` apart).
 */
export async function startByPeer(ctx: StartContext): Promise<PathOutcome> {
  const refusal = peerRefusal(ctx.host.config.modelExpress, ctx.request);
  if (refusal) throw new Error(refusal);
  const { request } = ctx;
  return request.peerSource?.lazyImage && request.deployment.estargzImageRef
    ? startLazily(ctx)
    : startByPull(ctx);
}
