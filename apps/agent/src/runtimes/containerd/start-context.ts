import { type StartReplicaRequest } from "@thaw/protocol";
import { type PhaseRecorder } from "../phase-recorder.ts";
import { type ProbeResult } from "../replica-http.ts";
import { LABEL_COLD_START, LABEL_REPLICA, type ContainerSpec } from "./commands.ts";
import { type ContainerdHost } from "./host.ts";
import { kernelCacheDirFor, withKernelCache } from "./kernel-cache.ts";
import { withModelExpress } from "./model-express.ts";

/** What every start path gets. */
export interface StartContext {
  host: ContainerdHost;
  request: StartReplicaRequest;
  rec: PhaseRecorder;
  signal: AbortSignal | undefined;
  /** The path calls this once a container exists, so a failure later removes it. */
  created: (containerId: string) => void;
}

export interface PathOutcome {
  containerId: string;
  probe: Pick<ProbeResult, "status" | "attempts">;
}

/**
 * The container a pull, lazy or peer start creates for a request (and the one a restore
 * rebuilds to compare with the checkpoint's): the deployment's kernel-cache directory mounted
 * with the engines pointed into it (kernel-cache.ts), its engine loading through ModelExpress
 * where the host has a server (model-express.ts).
 */
export function containerSpecFor(
  ctx: StartContext,
  imageRef: string,
  snapshotter?: string,
  /** `kernelCache: false`: as an agent built it before it mounted kernel-cache directories. */
  options: { kernelCache?: boolean } = {},
): ContainerSpec {
  const { request, host } = ctx;
  const spec = containerSpec(ctx, imageRef, snapshotter);
  return withModelExpress(
    options.kernelCache === false ? spec : withKernelCache(spec, kernelCacheDirFor(host, request)),
    host.config.modelExpress,
    request,
  );
}

function containerSpec(ctx: StartContext, imageRef: string, snapshotter?: string): ContainerSpec {
  const { request, host } = ctx;
  return {
    id: request.replicaId,
    imageRef,
    ...(snapshotter ? { snapshotter } : {}),
    labels: { [LABEL_REPLICA]: request.replicaId, [LABEL_COLD_START]: request.coldStartId },
    env: request.deployment.env,
    gpus: request.gpus,
    ...(request.deployment.checkpointable
      ? { checkpointable: { criuConfigPath: host.config.criuConfigPath } }
      : {}),
    ...(request.deployment.args ? { args: request.deployment.args } : {}),
  };
}
