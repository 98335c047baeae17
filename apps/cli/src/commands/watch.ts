import { unwrap, type Api } from "../api.ts";
import { CliError } from "../errors.ts";
import {
  coldStartLine,
  isClosed,
  whyLine,
  type ColdStartDetail,
} from "../watch/cold-start-line.ts";
import { liveEvents } from "../watch/live-events.ts";
import { apiContext, type GlobalOptions } from "./context.ts";

export interface WatchOptions extends GlobalOptions {
  failOnError?: boolean;
  count?: number;
  timeout?: number;
}

/**
 * `thaw cold-starts watch <endpoint>`: one line per cold start of the endpoint, redrawn as
 * its phases land (on a terminal; elsewhere, a new line per change). Exits when --count
 * starts have closed, when --timeout passes, at once on a failed start with
 * --fail-on-error, or on Ctrl-C.
 */
export async function watchColdStarts(endpoint: string, options: WatchOptions): Promise<void> {
  const { api, target, json } = apiContext(options);
  const ep = await unwrap(
    api.GET("/api/v1/endpoints/{endpoint}", { params: { path: { endpoint } } }),
    target.url,
  );
  const tty = process.stdout.isTTY && !json;
  const abort = new AbortController();
  const stop = () => abort.abort();
  process.once("SIGINT", stop);
  const timer =
    options.timeout !== undefined ? setTimeout(stop, options.timeout * 1000) : undefined;
  const seen = new Map<string, { line: string; row: number; closed: boolean }>();
  let rows = 0;
  let closedCount = 0;
  let failed: ColdStartDetail | undefined;
  if (!json) process.stderr.write(`watching cold starts of ${ep.slug} (Ctrl-C to stop)\n`);

  const show = (start: ColdStartDetail) => {
    const line = coldStartLine(start);
    const known = seen.get(start.id);
    if (known?.line === line) return;
    if (json) process.stdout.write(`${JSON.stringify(start)}\n`);
    else if (!known) {
      process.stdout.write(`${line}\n${whyLine(start)}\n`);
      rows += 2;
    } else if (tty) {
      // Redraw the start's own line in place: up to it, clear, write, back down.
      const up = rows - known.row;
      process.stdout.write(`\x1b[${up}A\r\x1b[2K${line}\x1b[${up}B\r`);
    } else process.stdout.write(`${line}\n`);
    const row = known?.row ?? rows - 2;
    const closed = isClosed(start);
    if (closed && !known?.closed) {
      closedCount++;
      if (start.status === "failed") failed ??= start;
    }
    seen.set(start.id, { line, row, closed });
  };

  try {
    for await (const event of liveEvents(target, abort.signal)) {
      for (const id of new Set([...event.coldStartIds, ...event.closedIds])) {
        const start = await detail(api, target.url, id);
        if (!start || start.endpoint.slug !== ep.slug) continue;
        show(start);
      }
      if (failed && options.failOnError) break;
      if (options.count !== undefined && closedCount >= options.count) break;
    }
  } finally {
    clearTimeout(timer);
    process.off("SIGINT", stop);
    abort.abort();
  }
  if (failed && options.failOnError)
    throw new CliError(
      `cold start ${failed.id} of ${ep.slug} failed${failed.failedPhase ? ` in ${failed.failedPhase}` : ""}${failed.error ? `: ${failed.error}` : ""}`,
    );
  if (options.count !== undefined && closedCount < options.count)
    throw new CliError(
      `${closedCount} of ${options.count} cold starts of ${ep.slug} finished before ${options.timeout !== undefined ? `the ${options.timeout}s timeout` : "the stream ended"}.`,
    );
}

async function detail(api: Api, url: string, id: string): Promise<ColdStartDetail | undefined> {
  const { data, response } = await api.GET("/api/v1/cold-starts/{id}", {
    params: { path: { id } },
  });
  if (response.status === 404) return undefined; // another org's id cannot arrive; a deleted one can
  if (!data) return unwrap(Promise.resolve({ data, response, error: undefined }), url);
  return data;
}
