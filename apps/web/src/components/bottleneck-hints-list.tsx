import type { BottleneckHint } from "@thaw/core";
import { BOUND_LABELS } from "./analytics-vocabulary.ts";
import { formatSeconds } from "./format.ts";

const MIB = 1024 * 1024;

function figure(hint: BottleneckHint): string {
  if (hint.unit === "seconds")
    return `${formatSeconds(hint.measured)} measured · ~${formatSeconds(hint.ceiling)} with warm caches`;
  return `${(hint.measured / MIB).toFixed(0)} MiB/s achieved · ${(hint.ceiling / MIB).toFixed(0)} MiB/s ceiling`;
}

/** What bounded each phase on its host and what to do about it, largest saving first. */
export function BottleneckHintsList({ hints }: { hints: BottleneckHint[] }) {
  if (hints.length === 0)
    return (
      <p className="muted" data-testid="bottleneck-none">
        No phase is bound by anything worth naming: none moved enough bytes or compiled long enough
        against this host&apos;s figures.
      </p>
    );
  return (
    <ul className="hints">
      {hints.map((h) => (
        <li
          key={`${h.phase}-${h.bound}`}
          className={`hint bound-${h.bound}`}
          data-testid="bottleneck-hint"
          data-phase={h.phase}
          data-bound={h.bound}
        >
          <div className="hint-head">
            <span className="chip">{h.phase}</span>
            <strong>{BOUND_LABELS[h.bound]} bound</strong>
            <span className="muted">
              {" "}
              · up to {formatSeconds(h.attributedSeconds)} of {formatSeconds(h.phaseSeconds)}
            </span>
          </div>
          <p>{h.text}</p>
          <div className="muted small">{figure(h)}</div>
        </li>
      ))}
    </ul>
  );
}
