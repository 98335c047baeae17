import { readFileSync } from "node:fs";
import { join } from "node:path";

// The README's REST examples as commands: the first bash block after a heading, split into
// shell commands (backslash continuations and quoted strings spanning lines kept whole), each
// with the comment that followed it.

export interface ReadmeCommand {
  /** The command as a shell would run it, without its comment. */
  shell: string;
  comment: string;
}

const ROOT = join(import.meta.dirname, "..", "..", "..");

/** The lines of the first ```bash block after the heading `heading` in README.md. */
export function readmeBlock(heading: string): string[] {
  const lines = readFileSync(join(ROOT, "README.md"), "utf8").split("\n");
  const at = lines.findIndex((l) => l.trim() === heading);
  if (at < 0) throw new Error(`README.md has no heading '${heading}'`);
  const open = lines.findIndex((l, i) => i > at && l.trim() === "```bash");
  const close = lines.findIndex((l, i) => i > open && l.trim() === "```");
  if (open < 0 || close < 0) throw new Error(`no bash block under '${heading}'`);
  return lines.slice(open + 1, close);
}

/** Splits a line into code and a trailing comment, ignoring '#' inside quotes. */
function splitComment(line: string, inQuote: string | null): [string, string, string | null] {
  let quote = inQuote;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "#" && (i === 0 || /\s/.test(line[i - 1]!)))
      return [line.slice(0, i), line.slice(i + 1).trim(), null];
  }
  return [line, "", quote];
}

export function shellCommands(lines: readonly string[]): ReadmeCommand[] {
  const commands: ReadmeCommand[] = [];
  let parts: string[] = [];
  let comments: string[] = [];
  let quote: string | null = null;
  for (const line of lines) {
    const [code, comment, openQuote] = splitComment(line, quote);
    quote = openQuote;
    if (comment) comments.push(comment);
    const trimmed = code.trimEnd();
    const continued = quote !== null || trimmed.endsWith("\\");
    parts.push(quote !== null ? code : trimmed.replace(/\\$/, ""));
    if (continued) continue;
    const shell = parts.join(quote === null ? " " : "\n").replace(/\s+$/, "");
    if (shell.trim()) commands.push({ shell: shell.trim(), comment: comments.join(" ") });
    parts = [];
    comments = [];
  }
  return commands;
}
