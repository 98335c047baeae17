import type { EngineHttpCall } from "@thaw/protocol";

// How each engine is put to sleep and woken over its own HTTP API (the agent makes the calls;
// the control plane names them). Sources, apps/agent/README.md "Sleeping engines":
// - vLLM (`--enable-sleep-mode`, routes served with VLLM_SERVER_DEV_MODE=1): `POST /sleep?level=1|2`,
//   `POST /wake_up`; after a level-2 wake the weights are read again with
//   `POST /collective_rpc {"method":"reload_weights"}` (docs/features/sleep_mode.md) and the
//   prefix cache reset, `POST /reset_prefix_cache` (vLLM blog, 2025-10-26).
// - SGLang (`--enable-memory-saver`): `POST /release_memory_occupation` and
//   `/resume_memory_occupation`; its weights survive only with `--enable-weights-cpu-backup`,
//   a server flag the control plane cannot see, and without it nothing reloads them over HTTP
//   from the image's path. Not slept.
// - llama.cpp: `--sleep-idle-seconds` unloads the model on its own after an idle time; there
//   is no call to sleep now and keep the process warm. Not slept.
// - TGI, Triton and custom images: no sleep API. Not slept.

export interface EngineSleepCalls {
  engineSleep: EngineHttpCall;
  engineWake: EngineHttpCall;
  /** Level 2: after the wake, in order: the weights' reload, the prefix cache's reset. */
  engineAfterWake?: EngineHttpCall[];
}

/**
 * The call that reads a level-2 engine's discarded weights again, or null for an engine that
 * cannot sleep: after a sleeping engine's wake, and after a level-2 snapshot's restore.
 */
export function engineWeightReload(engine: string): EngineHttpCall | null {
  return engine === "vllm"
    ? { path: "/collective_rpc", body: '{"method":"reload_weights"}' }
    : null;
}

/** The calls that put `engine` to sleep at `level` and wake it, or null when it cannot sleep. */
export function engineSleepCalls(engine: string, level: 1 | 2): EngineSleepCalls | null {
  const reload = engineWeightReload(engine);
  if (!reload) return null;
  return {
    engineSleep: { path: `/sleep?level=${level}` },
    engineWake: { path: "/wake_up" },
    ...(level === 2 ? { engineAfterWake: [reload, { path: "/reset_prefix_cache" }] } : {}),
  };
}
