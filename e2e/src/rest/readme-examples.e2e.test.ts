import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, waitFor, type Stack } from "../stack.ts";
import { newApiKey } from "./rest-client.ts";
import { readmeBlock, shellCommands } from "./readme-commands.ts";

// The README's REST examples, run as written, in order, with bash and curl against the built
// server and a live stack, so the documentation cannot drift from the product. A `NAME=…`
// line is a placeholder the reader fills in (the key shown once, an id from an earlier
// answer); this test fills it the same way. Each command must answer 2xx, or the status its
// comment names ("→ 201").

const README_URL = "http://localhost:3000";

function bash(script: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn("bash", ["-c", script], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    child.once("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

describe("the README's REST examples", () => {
  let stack: Stack;
  let key: string;

  beforeAll(async () => {
    // Room for the seeded endpoints and the README's qwen-7b (L40S) to start.
    stack = await startStack({ simHosts: "g5.xlarge:2,g6e.xlarge:2" });
    key = await newApiKey(stack.database.db, stack.orgId, [
      "endpoints:read",
      "endpoints:write",
      "endpoints:scale",
      "deployments:write",
    ]);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it("run as written, in order, and answer as documented", async () => {
    const commands = shellCommands(readmeBlock("## REST API (v1)"));
    const curls = commands.filter((c) => c.shell.startsWith("curl "));
    // The block documents every operation: a parser that found little would prove nothing.
    expect(curls.length).toBeGreaterThanOrEqual(15);

    const dir = mkdtempSync(join(tmpdir(), "thaw-readme-"));
    const vars: Record<string, string> = {};
    let lastBody = "";
    /** What a reader puts in for each placeholder. */
    const fill: Record<string, () => Promise<string>> = {
      KEY: () => Promise.resolve(key),
      ID: () => {
        const list = JSON.parse(lastBody) as { coldStarts?: { id: string }[] };
        const id = list.coldStarts?.[0]?.id;
        if (!id) throw new Error(`the answer before 'ID=' lists no cold start: ${lastBody}`);
        return Promise.resolve(id);
      },
    };
    const ran: string[] = [];
    for (const command of commands) {
      const placeholder = /^([A-Z_]+)=\S*…$/.exec(command.shell);
      if (placeholder) {
        const name = placeholder[1]!;
        if (!fill[name]) throw new Error(`no way to fill the README's placeholder ${name}=…`);
        vars[name] = await fill[name]();
        continue;
      }
      expect(command.shell, "every other line of the block is a curl command").toMatch(/^curl /);
      // A new endpoint's cold starts come from the scheduler: wait for one, as a reader would.
      if (command.shell.includes("/cold-starts?"))
        await waitFor(
          "a cold start of the README's endpoint",
          async () =>
            (await stack.database.db.coldStart.count({
              where: { endpoint: { slug: "qwen-7b" } },
            })) > 0,
          60_000,
          [],
        );
      const streaming = /^curl -N /.test(command.shell);
      const bodyFile = join(dir, `body-${ran.length}`);
      const script =
        command.shell
          .replaceAll(README_URL, stack.baseUrl)
          .replace(/^curl /, `curl -sS -o '${bodyFile}' -w '%{http_code}' `) +
        (streaming ? " --max-time 3" : "");
      const result = await bash(script, vars);
      const status = Number(result.stdout.trim());
      lastBody = readFileSync(bodyFile, "utf8");
      const expected = /→ (\d{3})/.exec(command.comment)?.[1];
      const what = `${command.shell}\n→ ${status} ${lastBody.slice(0, 500)} ${result.stderr}`;
      if (streaming) {
        // curl gives up after 3 s (exit 28) on a stream that stays open, as it should.
        expect(result.code, what).toBe(28);
        expect(lastBody, what).toContain(": connected");
      } else expect(result.code, what).toBe(0);
      if (expected) expect(status, what).toBe(Number(expected));
      else {
        expect(status, what).toBeGreaterThanOrEqual(200);
        expect(status, what).toBeLessThan(300);
      }
      ran.push(`${status} ${command.shell.slice(0, 80)}`);
    }
    console.log(`README examples:\n${ran.join("\n")}`);
    expect(ran).toHaveLength(curls.length);
  });
});
