import { AppError, LIVE_CHANNELS, LiveEvent } from "@thaw/core";
import { env } from "../../env.ts";
import { consumeLimit } from "../limits/rate-limits.ts";
import { log } from "../logger.ts";
import { readyWebRedis } from "../queue-producer.ts";
import { listen } from "./live-hub.ts";
import {
  releaseStreamSlot,
  renewStreamSlot,
  takeStreamSlot,
  type SlotHolder,
} from "./stream-slots.ts";

// Live events (ARCHITECTURE.md §3): Redis pub/sub per org, fed by telemetry ingest and served as
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

export interface LiveStreamRequest {
  orgId: string;
  /** Who holds the stream, e.g. `user:<id>` or `api_key:<id>`: its slots and open budget. */
  principal: string;
  signal: AbortSignal;
  /**
   * Asked again every THAW_LIVE_RECHECK_SECONDS: false (a revoked or expired key, a member
   * removed or demoted, a session ended) closes the stream.
   */
  stillAllowed: () => Promise<boolean>;
}

/**
 * An SSE response with the org's live events until the client goes away or loses access.
 * Refused (429) past the principal's opens per minute or its open streams, or the org's;
 * counted in Redis across web processes. All streams of a process share one Redis subscriber.
 */
export async function liveEventResponse(live: LiveStreamRequest): Promise<Response> {
  const redis = await readyWebRedis();
  if (!redis) {
    return Response.json(
      { error: { code: "UNAVAILABLE", message: "Live events need REDIS_URL.", details: null } },
      { status: 503, headers: { "retry-after": "30" } },
    );
  }
  const e = env();
  await consumeLimit("liveOpensPerPrincipal", live.principal);
  const recheckMs = e.THAW_LIVE_RECHECK_SECONDS * 1000;
  const lapseMs = 3 * recheckMs;
  const prefix = `${e.THAW_QUEUE_PREFIX}:live-streams`;
  const holders: SlotHolder[] = [
    {
      key: `${prefix}:${live.principal}`,
      cap: e.THAW_LIVE_STREAMS_PER_PRINCIPAL,
      who: live.principal.startsWith("api_key:") ? "this API key" : "this user",
    },
    { key: `${prefix}:org:${live.orgId}`, cap: e.THAW_LIVE_STREAMS_PER_ORG, who: "this org" },
  ];
  const streamId = crypto.randomUUID();
  const full = await takeStreamSlot(redis, holders, streamId, lapseMs);
  if (full)
    throw new AppError(
      "RATE_LIMITED",
      `Too many open live streams for ${full.who} (at most ${full.cap}); close one and retry.`,
      { retryAfterSeconds: 5, openStreamsLimit: full.cap },
    );

  const encoder = new TextEncoder();
  let ping: NodeJS.Timeout | undefined;
  let recheck: NodeJS.Timeout | undefined;
  let stopListening: (() => void) | undefined;
  let closed = false;
  let controllerRef: ReadableStreamDefaultController<Uint8Array> | undefined;
  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(ping);
    clearInterval(recheck);
    stopListening?.();
    releaseStreamSlot(redis, holders, streamId).catch(() => undefined);
    try {
      controllerRef?.close();
    } catch {
      // already closed by the client
    }
  };
  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      controllerRef = controller;
      const send = (text: string) => {
        if (closed) return;
        try {
          controller.enqueue(encoder.encode(text));
        } catch {
          close();
        }
      };
      stopListening = await listen(redis, channel(live.orgId), (message) => {
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
      if (closed) stopListening();
      send("retry: 3000\n: connected\n\n");
      ping = setInterval(() => send(": ping\n\n"), PING_MS);
      recheck = setInterval(() => {
        live
          .stillAllowed()
          .then(async (allowed) => {
            if (!allowed) return close();
            await renewStreamSlot(redis, holders, streamId, lapseMs);
          })
          .catch((error: unknown) =>
            log().warn(
              { err: error instanceof Error ? error.message : String(error) },
              "live stream: access re-check failed; kept until the next one",
            ),
          );
      }, recheckMs);
      live.signal.addEventListener("abort", close);
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
