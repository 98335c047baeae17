/**
 * Group commit: calls that arrive while earlier ones are being stored wait, and go to the
 * store together as one group when a slot frees. A call that finds a slot free goes at once,
 * alone — no timer, so nothing is added at low load; under load the groups grow by
 * themselves, and each group costs the store one transaction instead of one per call (the
 * technique of Postgres's own WAL flush and of Kafka's producer batching).
 *
 * `store` answers each item of a group in order; if it throws, every item of the group
 * fails with that error.
 */
export interface GroupCommitOptions<In, Out> {
  store: (items: In[]) => Promise<Out[]>;
  /** Groups being stored at once (each holds one database connection). */
  maxInFlight: number;
  /** The most a group carries, in `weigh` units; a heavier single item still goes alone. */
  maxGroupWeight: number;
  weigh: (item: In) => number;
}

export function groupCommit<In, Out>(
  options: GroupCommitOptions<In, Out>,
): (item: In) => Promise<Out> {
  const waiting: { item: In; resolve: (out: Out) => void; reject: (error: unknown) => void }[] = [];
  let inFlight = 0;

  const next = () => {
    while (inFlight < options.maxInFlight && waiting.length > 0) {
      let weight = options.weigh(waiting[0]!.item);
      let count = 1;
      while (count < waiting.length) {
        const w = options.weigh(waiting[count]!.item);
        if (weight + w > options.maxGroupWeight) break;
        weight += w;
        count++;
      }
      const group = waiting.splice(0, count);
      inFlight++;
      options
        .store(group.map((g) => g.item))
        .then((outs) => {
          if (outs.length !== group.length)
            throw new Error(`group commit: ${outs.length} answers for ${group.length} items`);
          group.forEach((g, i) => g.resolve(outs[i]!));
        })
        .catch((error: unknown) => {
          for (const g of group) g.reject(error);
        })
        .finally(() => {
          inFlight--;
          next();
        });
    }
  };

  return (item) =>
    new Promise<Out>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      next();
    });
}
