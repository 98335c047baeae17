"use client";

import { useLiveColdStarts } from "./use-live-cold-starts.ts";

/** Subscribes a server-rendered page to live cold-start updates; renders nothing. */
export function LiveColdStarts() {
  useLiveColdStarts();
  return null;
}
