import { z } from "zod";
import { EndpointRef } from "../endpoints/find-endpoint.ts";

// The what-if's query and answer, declared once for the use cases, tRPC, REST and the
// OpenAPI document.

/** A what-if replays at most this much recorded load. */
export const MAX_WHAT_IF_DAYS = 14;
/** By default, the last week. */
export const DEFAULT_WHAT_IF_DAYS = 7;

export const WhatIfQuery = z
  .object({
    /** ISO time; default: 7 days before `to`. Taken to the minute. */
    from: z.iso.datetime({ offset: true }).optional(),
    /** ISO time; default: now. Taken to the minute. */
    to: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();

/** The dashboard's call: which endpoint, and the window. */
export const GetEndpointWhatIfInput = WhatIfQuery.extend({ endpoint: EndpointRef }).strict();

export const WhatIfFamily = z.enum(["thaw", "pull-keepalive", "lazy-keepalive"]);

export const WhatIfPoint = z
  .object({
    /** thaw (the warm pool at a price of waiting), or a fixed keep-alive with pull or lazy starts. */
    family: WhatIfFamily,
    /** "price 4", "default", "10m". */
    setting: z.string(),
    /** thaw's price of waiting (GPU-seconds per second of wait); null: the default objective, or a fixed policy. */
    gpuSecondsPerWaitSecond: z.number().nullable(),
    meanWaitSeconds: z.number(),
    p99WaitSeconds: z.number(),
    /** Share of requests that waited for a replica to start. */
    coldStartFraction: z.number(),
    /** GPU-hours replicas were held ready but serving nothing. */
    idleGpuHours: z.number(),
    /** GPU-hours held in all (starting, serving, idle). */
    gpuHours: z.number(),
    /** gpuHours at the hosts' price per GPU-hour; null when the hosts have none. */
    costUsd: z.number().nullable(),
    /** The endpoint's setting today. */
    current: z.boolean(),
    /** What PATCH /api/v1/endpoints/{endpoint} sets to apply this point; null: not appliable (a comparison). */
    apply: z.object({ gpuSecondsPerWaitSecond: z.number().nullable() }).nullable(),
  })
  .meta({ id: "WhatIfPoint" });
export type WhatIfPoint = z.infer<typeof WhatIfPoint>;

export const WhatIfReport = z
  .object({
    endpointId: z.uuid(),
    slug: z.string(),
    from: z.string(),
    to: z.string(),
    /** ok: replayed; no_load: no load signal was recorded in the window (nothing to replay). */
    status: z.enum(["ok", "no_load"]),
    /** Why the answer is empty, or what to know when reading it. */
    message: z.string(),
    /** The endpoint's price of waiting today (null: the platform's default objective) and where it comes from. */
    current: z.object({
      gpuSecondsPerWaitSecond: z.number().nullable(),
      source: z.enum(["endpoint", "org", "platform"]),
    }),
    load: z.object({
      /** Minutes with a load sample. */
      minutes: z.number().int(),
      /** Highest requests in flight + queued reported. */
      peakConcurrency: z.number().int(),
      /** Mean requests in flight + queued over the window. */
      meanConcurrency: z.number(),
      /** Requests the replay ran per policy, each holding a slot; `unit` concurrent requests each. */
      replayedRequests: z.number().int(),
      unit: z.number().int(),
      /** Desired counts a person or a key set in the window (dashboard, REST): not replayed, as every policy is judged on the load alone. */
      manualScaleEvents: z.number().int(),
    }),
    fleet: z.object({
      gpuModel: z.string(),
      /** nodes: the org's hosts of the GPU model (grown to hold maxReplicas); default: none, so a default host profile. */
      source: z.enum(["nodes", "default"]),
      hosts: z.number().int(),
      profile: z.string(),
      usdPerGpuHour: z.number().nullable(),
    }),
    /** Every run, thaw's first (by price), then the fixed keep-alives. */
    points: z.array(WhatIfPoint),
    /** Seconds the replays took. */
    replaySeconds: z.number(),
  })
  .meta({ id: "WhatIfReport" });
export type WhatIfReport = z.infer<typeof WhatIfReport>;
