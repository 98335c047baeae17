import { type EngineHttpCall } from "@thaw/protocol";
import { engineCall } from "../replica-http.ts";
import { probeResumed, resumePausedTask } from "./resume-paused-task.ts";
import { type PathOutcome, type StartContext } from "./start-context.ts";

/** A parked replica: its container is paused, its engine possibly asleep. */
export interface ParkedReplica {
  containerId: string;
  port: number;
  engineWake?: EngineHttpCall;
}

/**
 * warm: hand a parked replica over. Tasks.Resume over containerd's API thaws the paused task
 * (one call where `ctr tasks resume` was a 10–25 ms process: this path is the one the control
 * plane should add nothing to), the engine is woken if it was put to sleep at park time, and
 * the readiness probe confirms it serves, its task checks over the API too — all of it is the
 * `handover` phase. No warmup: it was warmed when it first started.
 */
export async function startWarm(ctx: StartContext, parked: ParkedReplica): Promise<PathOutcome> {
  const { host, request, rec, signal } = ctx;
  const opts = signal ? { signal } : {};
  const probe = await rec.run("handover", async (scope) => {
    ctx.created(parked.containerId);
    scope.attributes.resumeSeconds = await resumePausedTask(ctx, parked.containerId, "parked");
    scope.attributes.fromReplicaId = request.warmReplicaId ?? "";
    if (parked.engineWake) {
      scope.attributes.wakeSeconds = await engineCall(parked.port, parked.engineWake, {
        what: "wake the engine",
        timeoutMs: host.config.timeouts.engineCallSeconds * 1000,
        ...opts,
      });
    }
    const result = await probeResumed(ctx, parked.containerId);
    scope.attributes.probeAttempts = result.attempts;
    return result;
  });
  rec.mark("ready", { port: request.readiness.port });
  return { containerId: parked.containerId, probe };
}
