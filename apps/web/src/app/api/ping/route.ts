// GET /api/ping — liveness: the process answers, nothing else is checked (readiness, with
// PostgreSQL and Redis, is /api/health). Also the bare-route baseline of bench:scale-hook.
// no-transform: Next would otherwise gzip these two bytes for every client that accepts gzip
// (json-route.ts's jsonResponse says why), and the baseline would measure zlib.
export function GET(): Response {
  return new Response("ok", { headers: { "cache-control": "no-store, no-transform" } });
}
