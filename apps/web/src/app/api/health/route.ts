import { getDb } from "../../../server/db.ts";
import { log } from "../../../server/logger.ts";
import { readyWebRedis } from "../../../server/queue-producer.ts";

// GET /api/health — readiness for load balancers and Kubernetes: 200 when PostgreSQL answers
// and Redis (when configured) answers, 503 naming which does not. No auth, no data: the
// error itself (hosts, ports, driver text) goes to the log, never to an anonymous client.

const TIMEOUT_MS = 2_000;

/** A dependency that did not answer in time (told apart from one that answered with an error). */
class NoAnswerInTime extends Error {}

/** "ok", "timeout" or "unavailable"; the reason is logged. */
async function check(name: string, what: () => Promise<unknown>): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      what(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new NoAnswerInTime(`no answer within ${TIMEOUT_MS} ms`)),
          TIMEOUT_MS,
        );
      }),
    ]);
    return "ok";
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log().warn(
      { dependency: name, err: message.split("\n")[0]!.slice(0, 300) },
      "health check failed",
    );
    return error instanceof NoAnswerInTime ? "timeout" : "unavailable";
  } finally {
    clearTimeout(timer);
  }
}

export async function GET(): Promise<Response> {
  const [database, redis] = await Promise.all([
    check("database", () => getDb().$queryRaw`SELECT 1`),
    check("redis", async () => {
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
