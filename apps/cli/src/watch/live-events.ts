import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { Target } from "../config.ts";
import { CliError } from "../errors.ts";

// The org's live events (GET /api/v1/stream, server-sent events) as an async stream of
// parsed `cold_starts` events; eventsource-parser reads the wire format.

export interface LiveEvent {
  type: "cold_starts";
  coldStartIds: string[];
  closedIds: string[];
  at: string;
}

export async function* liveEvents(target: Target, signal: AbortSignal): AsyncGenerator<LiveEvent> {
  let response: Response;
  try {
    response = await fetch(`${target.url}/api/v1/stream`, {
      headers: { authorization: `Bearer ${target.key ?? ""}`, accept: "text/event-stream" },
      signal,
    });
  } catch (error) {
    if (signal.aborted) return;
    throw new CliError(`Cannot reach ${target.url}: ${(error as Error).message}.`);
  }
  if (!response.ok || !response.body) {
    const body = (await response.json().catch(() => null)) as {
      error?: { message?: string; details?: { field?: string } };
    } | null;
    throw new CliError(
      body?.error?.message ?? `the live stream answered ${response.status}`,
      body?.error?.details?.field,
    );
  }
  const pending: LiveEvent[] = [];
  const parser = createParser({
    onEvent(message: EventSourceMessage) {
      if (message.event !== "cold_starts") return;
      try {
        pending.push(JSON.parse(message.data) as LiveEvent);
      } catch {
        // not an event of ours
      }
    },
  });
  const decoder = new TextDecoder();
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      parser.feed(decoder.decode(value, { stream: true }));
      while (pending.length > 0) yield pending.shift()!;
    }
  } catch (error) {
    if (signal.aborted) return;
    throw error;
  } finally {
    reader.releaseLock();
  }
}
