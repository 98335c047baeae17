import { type ProbeResult } from "../replica-http.ts";
import { type StartContext } from "./start-context.ts";

// What the warm and wake paths share: a paused task thawed over containerd's API, and the
// readiness probe that confirms the engine inside serves again.

/** Tasks.Resume on the parked container; its seconds. `what` names the task in an error. */
export async function resumePausedTask(
  ctx: StartContext,
  containerId: string,
  what: string,
): Promise<number> {
  const t0 = performance.now();
  await ctx.host.api
    .resumeTask(containerId, ctx.signal ? { signal: ctx.signal } : {})
    .catch((error: unknown) => {
      throw new Error(
        `resume the ${what} task: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    });
  return (performance.now() - t0) / 1000;
}

/** The request's readiness probe on the container, its task checked over the API. */
export function probeResumed(ctx: StartContext, containerId: string): Promise<ProbeResult> {
  const { host, request, signal } = ctx;
  return host.probe(containerId, request.readiness, signal, host.apiTaskStatus);
}
