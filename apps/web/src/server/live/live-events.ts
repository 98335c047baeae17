import { LIVE_CHANNELS, LiveEvent } from "@thaw/core";
import { env } from "../../env.ts";
import { log } from "../logger.ts";
import { readyWebRedis } from "../queue-producer.ts";

// Live events (DESIGN.md §3): Redis pub/sub per org, fed by telemetry ingest and served as
// server-sent events. Redis may lose them at any time — they only tell a client what to
// re-read; Postgres holds the truth.

const channel = (orgId: string) => `${env().THAW_QUEUE_PREFIX}:${LIVE_CHANNELS.org(orgId)}`;

/** Tells the org's live listeners which cold starts moved; never fails the caller. */
export async function publishColdStartProgress(
  orgId: string,
  change: { coldStartIds: string[]; closedIds: string[] },
): Promise<void> {
  if (change.coldStartIds.length === 0 && change.closedIds.length === 0) return;
  try {
    const redis = await readyWebRedis();
    if (!redis) return;
    const event = LiveEvent.parse({ type: "cold_starts", ...change, at: new Date().toISOString() });
    await redis.publish(channel(orgId), JSON.stringify(event));
  } catch (error) {
    log().warn(
      { err: error instanceof Error ? error.message : String(error) },
      "live event not published; clients catch up on their next read",
    );
  }
}

const PING_MS = 15_000;

/**
 * An SSE response with the org's live events until the client goes away. One Redis
 * subscriber per stream; a comment line every 15 s keeps proxies from closing it.
 */
export async function liveEventResponse(orgId: string, signal: AbortSignal): Promise<Response> {
  const redis = await readyWebRedis();
  if (!redis) {
    return Response.json(
      { error: { code: "UNAVAILABLE", message: "Live events need REDIS_URL.", details: null } },
      { status: 503, headers: { "retry-after": "30" } },
    );
  }
  const subscriber = redis.duplicate({ enableOfflineQueue: true, lazyConnect: false });
  const encoder = new TextEncoder();
  let ping: NodeJS.Timeout | undefined;
  const close = () => {
    clearInterval(ping);
    subscriber.disconnect();
  };
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      const send = (text: string) => {
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          close();
        }
      };
      subscriber.on("message", (_channel: string, message: string) => {
        // A throw here would be uncaught (an emitter callback) and take the server down.
        let json: unknown;
        try {
          json = JSON.parse(message);
        } catch {
          return;
        }
        const parsed = LiveEvent.safeParse(json);
        if (parsed.success)
          send(`event: ${parsed.data.type}\ndata: ${JSON.stringify(parsed.data)}\n\n`);
      });
      await subscriber.subscribe(channel(orgId));
      send("retry: 3000\n: connected\n\n");
      ping = setInterval(() => send(": ping\n\n"), PING_MS);
      signal.addEventListener("abort", () => {
        close();
        try {
          controller.close();
        } catch {
          // already closed by the client
        }
      });
    },
    cancel: close,
  });
  return new Response(stream, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
  });
}
