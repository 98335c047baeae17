"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { useTRPC } from "../trpc/client.tsx";

/**
 * Re-reads cold starts the moment their phases arrive: server-sent events from /api/live
 * (Redis pub/sub fed by telemetry ingest). The queries keep a slow poll as a fallback for
 * when the stream is down; EventSource reconnects by itself.
 */
export function useLiveColdStarts(): void {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  useEffect(() => {
    if (typeof EventSource === "undefined") return;
    const source = new EventSource("/api/live");
    const refresh = () => {
      void queryClient.invalidateQueries(trpc.coldStarts.pathFilter());
      // The endpoint page's figures and breakdown are computed from the same starts.
      void queryClient.invalidateQueries(trpc.analytics.pathFilter());
    };
    source.addEventListener("cold_starts", refresh);
    return () => {
      source.removeEventListener("cold_starts", refresh);
      source.close();
    };
  }, [queryClient, trpc]);
}
