import type { StartPath } from "@thaw/core";
import { START_PATHS } from "./analytics-vocabulary.ts";

/** How many starts took each path, e.g. "restore 12 · pull 3"; paths never taken are left out. */
export function PathMix({ mix }: { mix: Record<StartPath, number> }) {
  const taken = START_PATHS.filter((p) => mix[p] > 0);
  if (taken.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="chips" aria-label="Cold starts per path">
      {taken.map((p) => (
        <li key={p} className={`chip path-chip path-${p}`}>
          {p} {mix[p]}
        </li>
      ))}
    </ul>
  );
}
