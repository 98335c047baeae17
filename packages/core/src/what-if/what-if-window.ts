import { AppError, parseInput } from "../errors/index.ts";
import type { EffectiveWaitPrice } from "../scheduling/index.ts";
import {
  DEFAULT_WHAT_IF_DAYS,
  MAX_WHAT_IF_DAYS,
  WhatIfQuery,
  type WhatIfReport,
} from "./what-if-schemas.ts";

const MINUTE = 60_000;
const DAY = 86_400_000;

export interface WhatIfWindow {
  from: Date;
  to: Date;
}

/**
 * The window a what-if replays, from the query: whole minutes (load is recorded per minute,
 * and the same minutes make the same run, which repeated views share), by default the week
 * up to now's minute. Well-formed times that make no window are a 422 naming the field (a
 * schema-valid request is never a 400).
 */
export function whatIfWindow(input: unknown, where: string, now: Date): WhatIfWindow {
  const query = parseInput(WhatIfQuery, input ?? {}, where);
  const floor = (at: Date) => new Date(Math.floor(at.getTime() / MINUTE) * MINUTE);
  const to = floor(query.to ? new Date(query.to) : now);
  const from = floor(
    query.from ? new Date(query.from) : new Date(to.getTime() - DEFAULT_WHAT_IF_DAYS * DAY),
  );
  for (const [name, at] of [
    ["from", from],
    ["to", to],
  ] as const)
    if (!(at.getTime() >= 0))
      throw new AppError("UNPROCESSABLE", `${name} must be after 1970.`, {
        field: `${where}.${name}`,
      });
  if (!(to > from))
    throw new AppError("UNPROCESSABLE", "from must be at least a minute before to.", {
      field: `${where}.from`,
    });
  if (to.getTime() - from.getTime() > MAX_WHAT_IF_DAYS * DAY)
    throw new AppError(
      "UNPROCESSABLE",
      `A what-if replays at most ${MAX_WHAT_IF_DAYS} days of load; ask for a shorter window.`,
      { field: `${where}.from` },
    );
  if (from.getTime() > now.getTime())
    throw new AppError("UNPROCESSABLE", "from is in the future: no load is recorded there.", {
      field: `${where}.from`,
    });
  return { from, to };
}

/** What the UI tells an endpoint without recorded load. */
export const NO_LOAD_MESSAGE =
  "No load was recorded for this endpoint in the window. The what-if replays the load signals " +
  "(POST /api/v1/endpoints/{endpoint}/signals: requests in flight + queued, from your gateway or " +
  "autoscaler) the endpoint received; send them and come back once some minutes are recorded.";

/** The empty answer: nothing to replay in the window. */
export function noLoadReport(o: {
  endpoint: { id: string; slug: string; gpuType: string };
  window: WhatIfWindow;
  current: EffectiveWaitPrice;
}): WhatIfReport {
  return {
    endpointId: o.endpoint.id,
    slug: o.endpoint.slug,
    from: o.window.from.toISOString(),
    to: o.window.to.toISOString(),
    status: "no_load",
    message: NO_LOAD_MESSAGE,
    current: { gpuSecondsPerWaitSecond: o.current.value, source: o.current.source },
    load: {
      minutes: 0,
      peakConcurrency: 0,
      meanConcurrency: 0,
      replayedRequests: 0,
      unit: 1,
      manualScaleEvents: 0,
    },
    fleet: {
      gpuModel: o.endpoint.gpuType,
      source: "default",
      hosts: 0,
      profile: "",
      usdPerGpuHour: null,
    },
    points: [],
    replaySeconds: 0,
  };
}
