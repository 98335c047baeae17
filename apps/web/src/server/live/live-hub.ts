import type { Redis } from "ioredis";
import { log } from "../logger.ts";

// One Redis subscriber per web process for every live stream it serves: a stream registers a
// listener on its org's channel, and the channel is subscribed while it has listeners. Before
// this, each stream opened its own Redis connection — 10k streams exhausted Redis's clients
// for BullMQ and every tenant.

type Listener = (message: string) => void;

const holder = globalThis as typeof globalThis & {
  __thawLiveHub?: { subscriber: Redis; listeners: Map<string, Set<Listener>> };
};

function hub(base: Redis) {
  if (!holder.__thawLiveHub) {
    const subscriber = base.duplicate({ enableOfflineQueue: true, maxRetriesPerRequest: null });
    const listeners = new Map<string, Set<Listener>>();
    subscriber.on("message", (channel: string, message: string) => {
      for (const listener of listeners.get(channel) ?? []) listener(message);
    });
    subscriber.on("error", (error: Error) =>
      log().warn({ err: error.message }, "live subscriber: Redis error; it reconnects"),
    );
    holder.__thawLiveHub = { subscriber, listeners };
  }
  return holder.__thawLiveHub;
}

/** Calls `listener` with each message on `channel` until the returned function is called. */
export async function listen(
  base: Redis,
  channel: string,
  listener: Listener,
): Promise<() => void> {
  const { subscriber, listeners } = hub(base);
  let set = listeners.get(channel);
  if (!set) {
    set = new Set();
    listeners.set(channel, set);
    await subscriber.subscribe(channel);
  }
  set.add(listener);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    set.delete(listener);
    if (set.size === 0 && listeners.get(channel) === set) {
      listeners.delete(channel);
      subscriber.unsubscribe(channel).catch(() => undefined);
    }
  };
}

/** Streams this process serves now, by channel (for tests and metrics). */
export function liveListenerCount(): number {
  let n = 0;
  for (const set of holder.__thawLiveHub?.listeners.values() ?? []) n += set.size;
  return n;
}
