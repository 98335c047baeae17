import { isNextBuild } from "./env.ts";

/** Runs once when a Next.js server starts, before it serves requests. */
export async function register(): Promise<void> {
  // NEXT_RUNTIME is not configuration: Next replaces it at compile time, and only this literal
  // form lets the edge build drop the Node-only boot check (src/env.ts reads everything else).
  if (process.env.NEXT_RUNTIME !== "nodejs" || isNextBuild()) return;
  const { checkEnvironmentAtBoot } = await import("./server/boot.ts");
  checkEnvironmentAtBoot();
  const { installMethodGuard } = await import("./server/http/method-guard.ts");
  const { allowedRestMethods, servedRestPathMethods } =
    await import("./server/rest/rest-methods.ts");
  installMethodGuard((path) => allowedRestMethods(servedRestPathMethods(), path));
}
