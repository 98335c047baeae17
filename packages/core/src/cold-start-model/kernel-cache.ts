import type { HostRates } from "./engine-phases";
import type { Physics } from "./physical-constants";
import type { ColdStartScenario, PhaseTiming } from "./scenario-schema";

// The kernel-cache store: a phase accelerator for every path that compiles (pull, lazy, and a
// peer copy whose source sends no caches). vLLM keeps torch.compile's artifacts, with
// Inductor's and Triton's caches nested inside, under VLLM_CACHE_ROOT "so that users only need
// to copy the cache_dir to another machine to reuse the cache" (vllm compiler_interface.py,
// vllm-project/vllm#25205); the cache is keyed by the engine's config, code and environment
// (NovaSky-AI/SkyRL#2167), so a store entry belongs to one deployment on one GPU model and
// driver. With it, vLLM reports "Directly load the compiled graph(s) … from the cache, took
// 1.803 s" instead of compiling (MooreThreads/vllm-musa#69). Restore, wake and warm starts do
// not compile: their engines kept their kernels.

/** The paths whose engine compiles on the way to ready, and so can use a stored cache. */
export function compilesOnStart(scenario: Pick<ColdStartScenario, "path" | "peer">): boolean {
  if (scenario.path === "pull" || scenario.path === "lazy") return true;
  return scenario.path === "peer" && !scenario.peer.kernelCaches;
}

/**
 * Whether this start fetches the stored cache: one is stored for the host's GPU and driver,
 * the path compiles, and the host does not already hold the caches of an earlier start.
 */
export function fetchesStoredKernelCache(scenario: ColdStartScenario): boolean {
  return (
    scenario.kernelCache !== undefined && !scenario.engine.warmCaches && compilesOnStart(scenario)
  );
}

/**
 * The cache fetched from the operator's store (one OCI artifact: a single uncompressed tar
 * layer, one HTTP stream after the registry's round trips) into the host's cache directory.
 */
export function fetchKernelCacheTiming(
  scenario: ColdStartScenario,
  rates: HostRates,
  physics: Physics,
): PhaseTiming {
  const bytes = scenario.kernelCache?.bytes ?? physics.defaultKernelCacheBytes;
  const bytesPerSecond = Math.min(
    rates.registryStreamBytesPerSecond,
    rates.nicBytesPerSecond,
    rates.diskWriteBytesPerSecond,
  );
  return {
    phase: "fetch_kernel_cache",
    seconds: physics.registrySetupRoundTrips * rates.rttSeconds + bytes / bytesPerSecond,
    bytes,
  };
}

/** `phases` (computed with warm caches) with the fetch put just before `compile`. */
export function withKernelCacheFetch(
  phases: readonly PhaseTiming[],
  fetch: PhaseTiming,
): PhaseTiming[] {
  const at = phases.findIndex((timing) => timing.phase === "compile");
  return at < 0 ? [...phases, fetch] : [...phases.slice(0, at), fetch, ...phases.slice(at)];
}
