import { type EngineHttpCall } from "@thaw/protocol";
import { engineCall } from "../replica-http.ts";
import { probeResumed, resumePausedTask } from "./resume-paused-task.ts";
import { type PathOutcome, type StartContext } from "./start-context.ts";

/** A sleeping replica: its task paused, its engine asleep, its GPUs given back. */
export interface SleepingReplica {
  containerId: string;
  port: number;
  sleepLevel: 1 | 2;
  engineWake: EngineHttpCall;
  /** Level 2: e.g. vLLM's reload_weights, then its reset_prefix_cache. */
  engineAfterWake?: EngineHttpCall[];
}

/**
 * wake: a sleeping engine woken on the GPUs it slept on (the lifecycle checked they are free).
 * `load_weights`: Tasks.Resume thaws the paused task, the engine's wake call (vLLM
 * `POST /wake_up`) copies its weights back from host memory at level 1, or re-allocates them
 * at level 2, where the calls after the wake (vLLM's `reload_weights`, `reset_prefix_cache`)
 * read them again and drop the stale prefix cache; the engine
 * re-allocates its KV cache in the wake call too. `warmup`: the readiness probe, until it
 * serves. Nothing is pulled, created, compiled or captured: the process kept all of it.
 */
export async function startWake(
  ctx: StartContext,
  sleeping: SleepingReplica,
): Promise<PathOutcome> {
  const { host, request, rec, signal } = ctx;
  const opts = signal ? { signal } : {};
  const timeoutMs = host.config.timeouts.engineCallSeconds * 1000;
  await rec.run("load_weights", async (scope) => {
    ctx.created(sleeping.containerId);
    scope.attributes.fromReplicaId = request.sleepingReplicaId ?? "";
    scope.attributes.sleepLevel = sleeping.sleepLevel;
    scope.attributes.resumeSeconds = await resumePausedTask(ctx, sleeping.containerId, "sleeping");
    scope.attributes.wakeSeconds = await engineCall(sleeping.port, sleeping.engineWake, {
      what: "wake the engine",
      timeoutMs,
      ...opts,
    });
    let afterWakeSeconds = 0;
    for (const call of sleeping.engineAfterWake ?? [])
      afterWakeSeconds += await engineCall(sleeping.port, call, {
        what: `call ${call.path} after the wake`,
        timeoutMs,
        ...opts,
      });
    if (sleeping.engineAfterWake) scope.attributes.reloadSeconds = afterWakeSeconds;
  });
  const probe = await rec.run("warmup", async (scope) => {
    const result = await probeResumed(ctx, sleeping.containerId);
    scope.attributes.probeAttempts = result.attempts;
    return result;
  });
  rec.mark("ready", { port: request.readiness.port });
  return { containerId: sleeping.containerId, probe };
}
