import { unwrap, type Api } from "../api.ts";
import { CliError } from "../errors.ts";
import type { ColdStartDetail } from "../watch/cold-start-line.ts";
import { liveEvents } from "../watch/live-events.ts";
import { PlainScreen, TerminalScreen, type Screen } from "../watch/screen.ts";
import { WatchTracker } from "../watch/watch-tracker.ts";
import { apiContext, type GlobalOptions } from "./context.ts";

export interface WatchOptions extends GlobalOptions {
  failOnError?: boolean;
  count?: number;
  timeout?: number;
}

/**
 * Live events may be lost (a reconnect, a slow reader): the endpoint's list is read again
 * this often even when no event came, so a start is never missed for long.
 */
const RELIST_MS = 5_000;

/**
 * `thaw cold-starts watch <endpoint>`: one status line per cold start of the endpoint, redrawn
 * as its phases land (on a terminal; elsewhere, a new line per change), and once why its path
 * won. Exits when --count starts have closed, when --timeout passes, at once on a failed start
 * with --fail-on-error, or on Ctrl-C.
 */
export async function watchColdStarts(endpoint: string, options: WatchOptions): Promise<void> {
  const { api, target, json } = apiContext(options);
  const ep = await unwrap(
    api.GET("/api/v1/endpoints/{endpoint}", { params: { path: { endpoint } } }),
    target.url,
  );
  const tracker = new WatchTracker(options);
  const write = (text: string) => process.stdout.write(text);
  const screen: Screen | undefined = json
    ? undefined
    : process.stdout.isTTY
      ? new TerminalScreen(write, () => ({
          columns: process.stdout.columns || 120,
          rows: process.stdout.rows || 40,
        }))
      : new PlainScreen(write);

  const abort = new AbortController();
  const stop = () => abort.abort();
  process.once("SIGINT", stop);
  const timer =
    options.timeout !== undefined ? setTimeout(stop, options.timeout * 1000) : undefined;
  if (!json) process.stderr.write(`watching cold starts of ${ep.slug} (Ctrl-C to stop)\n`);

  const read = async (ids: string[]) => {
    for (const id of ids) {
      const start = await detail(api, target.url, id);
      if (!start || start.endpoint.slug !== ep.slug) {
        tracker.skip([id]);
        continue;
      }
      const observation = tracker.observe(start);
      if (json) {
        if (observation.kind !== "same") write(`${JSON.stringify(start)}\n`);
      } else screen!.show(start.id, observation);
    }
  };
  const relist = async () => {
    const listed = await unwrap(
      api.GET("/api/v1/endpoints/{endpoint}/cold-starts", {
        params: { path: { endpoint: ep.slug } },
      }),
      target.url,
    );
    await read(tracker.fromList(listed.coldStarts));
    return listed.coldStarts.map((s) => s.id);
  };

  // Reads run one at a time, in order: a relist and an event never interleave their output.
  let queue: Promise<unknown> = Promise.resolve();
  // A read that failed (the watch goes on: the next list reads again) never blocks the next.
  const serial = (work: () => Promise<unknown>) =>
    (queue = queue.catch(() => undefined).then(work));
  let lastList = Date.now();
  // A relist may close the watch while no event is coming: the stream is ended then too.
  const relistTimer = setInterval(() => {
    if (Date.now() - lastList < RELIST_MS) return;
    void serial(relist)
      .then(() => {
        if (tracker.stopReason()) abort.abort();
      })
      .catch(() => undefined);
  }, RELIST_MS);

  try {
    const events = liveEvents(target, abort.signal);
    // The first list is the baseline: starts closed before the watch are history.
    await serial(relist);
    lastList = Date.now();
    for await (const event of events) {
      await serial(async () => {
        const { read: known, unknown } = tracker.triage([
          ...event.coldStartIds,
          ...event.closedIds,
        ]);
        await read(known);
        if (unknown.length === 0) return;
        // Ids of the whole org arrive; the endpoint's list says which are its own.
        const listed = new Set(await relist());
        lastList = Date.now();
        tracker.skip(unknown.filter((id) => !listed.has(id)));
      });
      if (tracker.stopReason()) break;
    }
  } finally {
    clearTimeout(timer);
    clearInterval(relistTimer);
    process.off("SIGINT", stop);
    abort.abort();
  }
  await queue.catch(() => undefined);
  const reason = tracker.stopReason();
  if (reason?.kind === "failed") {
    const failed = reason.start;
    throw new CliError(
      `cold start ${failed.id} of ${ep.slug} failed${failed.failedPhase ? ` in ${failed.failedPhase}` : ""}${failed.error ? `: ${failed.error}` : ""}`,
    );
  }
  if (options.count !== undefined && tracker.closedCount < options.count)
    throw new CliError(
      `${tracker.closedCount} of ${options.count} cold starts of ${ep.slug} finished before ${options.timeout !== undefined ? `the ${options.timeout}s timeout` : "the stream ended"}.`,
    );
}

async function detail(api: Api, url: string, id: string): Promise<ColdStartDetail | undefined> {
  const answer = await api.GET("/api/v1/cold-starts/{id}", { params: { path: { id } } });
  // Another org's id cannot arrive; a deleted endpoint's can.
  if (answer.response.status === 404) return undefined;
  return unwrap(Promise.resolve(answer), url);
}
