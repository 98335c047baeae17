import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

// Every command answers --help with its usage and exits 0, without a key, a server or a
// database: what a user types first.

const main = join(import.meta.dirname, "main.ts");
const thaw = (args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", main, ...args], {
    encoding: "utf8",
    timeout: 30_000,
    env: { PATH: process.env.PATH ?? "", HOME: "/nonexistent" },
  });

const COMMANDS = [
  [],
  ["login"],
  ["endpoints"],
  ["endpoints", "list"],
  ["endpoints", "get"],
  ["endpoints", "delete"],
  ["scale"],
  ["status"],
  ["predictions"],
  ["apply"],
  ["cold-starts"],
  ["cold-starts", "watch"],
  ["admin"],
  ["admin", "api-key", "create"],
  ["admin", "org", "quota"],
  ["admin", "node"],
];

describe("thaw --help", () => {
  it.each(COMMANDS.map((c) => [c.join(" ") || "(root)", c] as const))(
    "%s prints its usage and exits 0",
    (_name, command) => {
      const run = thaw([...command, "--help"]);
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^Usage: thaw${command.length ? " " : ""}`));
      expect(run.stdout).toMatch(/-h, --help/);
    },
    30_000,
  );
});
