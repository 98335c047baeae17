import type { Observation } from "./watch-tracker.ts";

// How the watch prints: on a terminal each start's status line is redrawn in place (lines cut
// to the terminal's width, so one line is one row and the cursor arithmetic holds); anywhere
// else (CI logs, pipes) every change is a new plain line, without cursor movement.

export interface Screen {
  show(id: string, observation: Observation): void;
}

/** Lines appended as they change: for logs and pipes. */
export class PlainScreen implements Screen {
  constructor(private readonly write: (text: string) => void) {}

  show(_id: string, o: Observation): void {
    if (o.kind === "new") this.write([o.line, ...o.why].map((l) => `${l}\n`).join(""));
    else if (o.kind === "changed") this.write(`${o.line}\n`);
  }
}

/** Cuts a line to `columns` cells (every character the watch prints is one cell wide). */
export function fit(line: string, columns: number): string {
  const chars = [...line];
  if (columns < 2 || chars.length < columns) return line;
  return `${chars.slice(0, columns - 2).join("")}…`;
}

/** Status lines redrawn where they stand: for a terminal. */
export class TerminalScreen implements Screen {
  /** Rows written so far; each start's status line is at its row. */
  private rows = 0;
  private readonly rowOf = new Map<string, number>();

  constructor(
    private readonly write: (text: string) => void,
    private readonly size: () => { columns: number; rows: number },
  ) {}

  show(id: string, o: Observation): void {
    if (o.kind === "same") return;
    const { columns, rows } = this.size();
    const row = this.rowOf.get(id);
    const up = row === undefined ? 0 : this.rows - row;
    // A line scrolled off the screen cannot be reached: print the change as a new line.
    if (o.kind === "new" || row === undefined || up >= rows) {
      const lines = o.kind === "new" ? [o.line, ...o.why] : [o.line];
      this.rowOf.set(id, this.rows);
      this.write(lines.map((l) => `${fit(l, columns)}\n`).join(""));
      this.rows += lines.length;
      return;
    }
    // Up to the start's row, clear it, write, and back down to where the cursor was.
    this.write(`\x1b[${up}A\r\x1b[2K${fit(o.line, columns)}\x1b[${up}B\r`);
  }
}
