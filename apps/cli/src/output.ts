/** Prints a result: its JSON with --json, else the human rendering. */
export function emit(asJson: boolean, data: unknown, human: () => string): void {
  process.stdout.write(asJson ? `${JSON.stringify(data, null, 2)}\n` : `${human()}\n`);
}

/** A small aligned table for human output. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
