import { type StartReplicaRequest } from "@thaw/protocol";
import { type ContainerSpec } from "./commands.ts";
import { type ModelExpressSettings } from "./config.ts";

// NVIDIA ModelExpress (ai-dynamo/modelexpress): an engine started with `--load-format
// modelexpress` (vLLM 0.23.0 and newer; older ones need VLLM_PLUGINS=modelexpress) tries, in
// order, a P2P copy from a serving replica over NIXL, the server's cache, then storage, and
// once loaded publishes itself as a source. So on a host with a ModelExpress server every
// start with an engine command loads through it: a pull or lazy start bootstraps from storage
// and becomes a source, a peer start receives. The names are ModelExpress's
// (docs/DEPLOYMENT.md, "P2P Environment Variables").

/** Why a peer start cannot run here, or undefined when it can. */
export function peerRefusal(
  settings: ModelExpressSettings | undefined,
  request: StartReplicaRequest,
): string | undefined {
  if (!settings)
    return "this host has no ModelExpress server (THAW_MODELEXPRESS_SERVER), so its engines cannot receive a peer copy";
  if (!request.deployment.args)
    return "the peer path needs the deployment's engine command (args) to add --load-format modelexpress";
  return undefined;
}

/**
 * Why a sleep-level-2 restore cannot take its weights from the serving replica the scheduler
 * named (`peerSource`) here, or undefined when it can. The checkpointed engine was started by a
 * pull, lazy or peer start on a host with a ModelExpress server, so with `--load-format
 * modelexpress` (withModelExpress; the restore's spec check holds it to that): its reload after
 * the wake loads through ModelExpress and receives the weights from a source. That needs a
 * server here, an engine command the load format was added to, and the reload call itself.
 */
export function restoreFromPeerRefusal(
  settings: ModelExpressSettings | undefined,
  request: StartReplicaRequest,
): string | undefined {
  if (!settings)
    return "this host has no ModelExpress server (THAW_MODELEXPRESS_SERVER), so a restored engine cannot receive its weights from a peer";
  if (!request.deployment.args)
    return "a restore with its weights from a peer needs the deployment's engine command (args): only an engine started with --load-format modelexpress reloads through ModelExpress";
  if (!request.deployment.snapshot?.reloadWeights)
    return "a restore with its weights from a peer needs the snapshot's reloadWeights call: the woken engine receives them when it reloads";
  return undefined;
}

/** The container spec with the engine loading through ModelExpress, where it can. */
export function withModelExpress(
  spec: ContainerSpec,
  settings: ModelExpressSettings | undefined,
  request: StartReplicaRequest,
): ContainerSpec {
  // Without an engine command there is nowhere to put the load format: the image's own runs.
  if (!settings || !spec.args) return spec;
  const kernelCaches = request.peerSource?.kernelCaches ?? true;
  const env: Record<string, string> = {
    ...spec.env,
    MX_SERVER_ADDRESS: settings.serverAddress,
    // Deprecated, and still preferred when both are set: both, so neither wins by surprise.
    MODEL_EXPRESS_URL: settings.serverAddress,
    // Targets read a source's tensor manifest from the source itself.
    MX_P2P_METADATA: "1",
    // One registration for the whole weight pool: 1.14 s against 8.16 s per tensor.
    MX_POOL_REG: "1",
    // On EFA the UCX backend can fall back to TCP silently: libfabric there, UCX elsewhere.
    MX_NIXL_BACKEND: settings.rdma ? "LIBFABRIC" : "UCX",
    // Of the serving replicas, the least loaded sends (the scheduler priced its choice so).
    MX_P2P_SOURCE_SELECTOR: "load_aware",
    // The compiled-kernel caches (Triton, torch.compile, FlashInfer, DeepGEMM) too.
    ...(kernelCaches ? { MX_ARTIFACT_TRANSFER: "1" } : {}),
  };
  const args = spec.args.includes("--load-format")
    ? spec.args
    : [...spec.args, "--load-format", "modelexpress"];
  return { ...spec, env, args };
}
