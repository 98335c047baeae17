import { getDb } from "../../../server/db.ts";
import { readyWebRedis } from "../../../server/queue-producer.ts";

// GET /api/health — readiness for load balancers and Kubernetes: 200 when PostgreSQL answers
// and Redis (when configured) answers, 503 naming what does not. No auth, no data.

const TIMEOUT_MS = 2_000;

/** "ok", or what went wrong. */
async function check(what: () => Promise<unknown>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      what(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`no answer within ${TIMEOUT_MS} ms`)),
          TIMEOUT_MS,
        );
      }),
    ]);
    return "ok";
  } catch (error) {
    return error instanceof Error ? error.message.split("\n")[0]!.slice(0, 200) : String(error);
  } finally {
    clearTimeout(timer);
  }
}

export async function GET(): Promise<Response> {
  const [database, redis] = await Promise.all([
    check(() => getDb().$queryRaw`SELECT 1`),
    check(async () => {
      const client = await readyWebRedis();
      if (!client) return;
      if ((await client.ping()) !== "PONG") throw new Error("unexpected PING answer");
    }),
  ]);
  const ok = database === "ok" && redis === "ok";
  return Response.json(
    { status: ok ? "ok" : "degraded", database, redis },
    { status: ok ? 200 : 503, headers: { "cache-control": "no-store" } },
  );
}
