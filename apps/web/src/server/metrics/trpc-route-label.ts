import { appRouter } from "../trpc/root.ts";

// The `route` label of a tRPC request: a procedure the router has, never the name as sent
// (anyone can send any name, and each distinct label value is a series Prometheus keeps).

let procedures: Set<string> | undefined;

/**
 * The tRPC procedure a request calls ("endpoints.list"), "batch" for several, or "unknown"
 * for a name the router does not have.
 */
export function trpcRouteLabel(request: Request): string {
  procedures ??= new Set(Object.keys(appRouter._def.procedures));
  let names: string[];
  try {
    names = decodeURIComponent(new URL(request.url).pathname.replace(/^\/api\/trpc\/?/, ""))
      .split(",")
      .filter((name) => name !== "");
  } catch {
    return "unknown"; // a malformed %-escape: tRPC refuses the call too
  }
  if (names.length > 1) return "batch";
  const [name] = names;
  return name && procedures.has(name) ? name : "unknown";
}
