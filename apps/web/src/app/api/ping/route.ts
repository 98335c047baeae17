// GET /api/ping — liveness: the process answers, nothing else is checked (readiness, with
// PostgreSQL and Redis, is /api/health). Also the bare-route baseline of bench:scale-hook.
export function GET(): Response {
  return new Response("ok", { headers: { "cache-control": "no-store" } });
}
