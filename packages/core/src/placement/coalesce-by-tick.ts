import type { DbClient } from "@thaw/db";

// At hundreds of placements a second, the dispatch and place workers each make the same
// one-row statement dozens of times in one turn of the event loop. Calls made in the same
// turn share one set-based statement instead: the same rows read or written, one round trip
// (and one query build) instead of dozens. Each caller still gets its own answer, and a
// failed statement fails every caller that shared it (their jobs are retried).

interface Waiter<V> {
  resolve: (value: V | undefined) => void;
  reject: (error: unknown) => void;
}

export function coalesceByTick<K, V>(
  run: (db: DbClient, keys: K[]) => Promise<Map<K, V>>,
): (db: DbClient, key: K) => Promise<V | undefined> {
  const queued = new Map<DbClient, Map<K, Waiter<V>[]>>();
  const flush = (db: DbClient) => {
    const waiting = queued.get(db);
    queued.delete(db);
    if (!waiting) return;
    run(db, [...waiting.keys()]).then(
      (results) => {
        for (const [key, waiters] of waiting) for (const w of waiters) w.resolve(results.get(key));
      },
      (error: unknown) => {
        for (const waiters of waiting.values()) for (const w of waiters) w.reject(error);
      },
    );
  };
  return (db, key) =>
    new Promise<V | undefined>((resolve, reject) => {
      let waiting = queued.get(db);
      if (!waiting) {
        waiting = new Map();
        queued.set(db, waiting);
        setImmediate(flush, db);
      }
      const waiters = waiting.get(key) ?? [];
      waiters.push({ resolve, reject });
      waiting.set(key, waiters);
    });
}
