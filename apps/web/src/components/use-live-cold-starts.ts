"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { useTRPC } from "../trpc/client.tsx";

/**
 * Re-reads cold starts the moment their phases arrive: server-sent events from /api/live
 * (Redis pub/sub fed by telemetry ingest). The queries keep a slow poll as a fallback for
 * when the stream is down; EventSource reconnects by itself.
 */
const ANALYTICS_REFRESH_MS = 3_000;

export function useLiveColdStarts(): void {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  useEffect(() => {
    if (typeof EventSource === "undefined") return;
    const source = new EventSource("/api/live");
    let analyticsTimer: ReturnType<typeof setTimeout> | undefined;
    // A read already in flight is left to finish (cancelRefetch: false): phases can arrive
    // faster than a read takes, and cancelling each time would never let one complete.
    const refresh = () => {
      void queryClient.invalidateQueries(trpc.coldStarts.pathFilter(), { cancelRefetch: false });
      // The endpoint page's figures read hundreds of starts with their phases: at most once
      // per ANALYTICS_REFRESH_MS however fast events come, and once more after the last one.
      analyticsTimer ??= setTimeout(() => {
        analyticsTimer = undefined;
        void queryClient.invalidateQueries(trpc.analytics.pathFilter(), { cancelRefetch: false });
      }, ANALYTICS_REFRESH_MS);
    };
    source.addEventListener("cold_starts", refresh);
    return () => {
      clearTimeout(analyticsTimer);
      source.removeEventListener("cold_starts", refresh);
      source.close();
    };
  }, [queryClient, trpc]);
}
