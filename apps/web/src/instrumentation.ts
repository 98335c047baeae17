import { isNextBuild } from "./env.ts";

/** Runs once when a Next.js server starts, before it serves requests. */
export async function register(): Promise<void> {
  // NEXT_RUNTIME is not configuration: Next replaces it at compile time, and only this literal
  // form lets the edge build drop the Node-only boot check (src/env.ts reads everything else).
  if (process.env.NEXT_RUNTIME !== "nodejs" || isNextBuild()) return;
  const { checkEnvironmentAtBoot } = await import("./server/boot.ts");
  checkEnvironmentAtBoot();
  const { env } = await import("./env.ts");
  const { installRequestEdge, securityHeaders } = await import("./server/http/request-edge.ts");
  const { allowedRestMethods, servedRestPathMethods } =
    await import("./server/rest/rest-methods.ts");
  installRequestEdge({
    allowedOnRestPath: (path) => allowedRestMethods(servedRestPathMethods(), path),
    trustedProxies: env().THAW_TRUSTED_PROXIES,
    responseHeaders: securityHeaders({
      publicUrl: env().BETTER_AUTH_URL,
      development: env().NODE_ENV === "development",
    }),
  });
}
