import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { formatCommand, runTool, ToolError } from "./run-tool.ts";

const sh = (script: string) => ({ file: "/bin/sh", args: ["-c", script] });

describe("runTool", () => {
  it("passes arguments as an array, never through a shell", async () => {
    const { stdout } = await runTool(
      { file: "/usr/bin/printf", args: ["%s|", "a b", "$(echo injected)", "; rm -rf /"] },
      { what: "print", timeoutMs: 5_000 },
    );
    expect(stdout).toBe("a b|$(echo injected)|; rm -rf /|");
  });

  it("says what failed, the command, the exit code, stderr and the hint", async () => {
    const error = await runTool(sh("echo 'ctr: image not found' >&2; exit 3"), {
      what: "pull the image",
      timeoutMs: 5_000,
      hint: "Check the reference.",
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).message).toBe(
      "could not pull the image: `/bin/sh -c \"echo 'ctr: image not found' >&2; exit 3\"` exited with code 3. stderr: ctr: image not found. Check the reference.",
    );
    expect((error as ToolError).details).toMatchObject({
      exitCode: 3,
      stderr: "ctr: image not found",
    });
  });

  it("explains a tool that is not installed", async () => {
    const error = await runTool(
      { file: "ctr-remote-not-installed", args: [] },
      { what: "pull lazily", timeoutMs: 5_000 },
    ).catch((e: unknown) => e);
    expect((error as ToolError).details.notFound).toBe(true);
    expect((error as Error).message).toContain(
      "ctr-remote-not-installed was not found (is it installed and on the agent's PATH?)",
    );
  });

  it("stops a tool that overruns its deadline", async () => {
    const t0 = performance.now();
    const error = await runTool(sh("exec sleep 30"), { what: "wait", timeoutMs: 200 }).catch(
      (e: unknown) => e,
    );
    expect((error as ToolError).details.timedOut).toBe(true);
    expect((error as Error).message).toContain("timed out after 0.2 s and was stopped");
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  it("stops a tool when the start is cancelled", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const error = await runTool(sh("exec sleep 30"), {
      what: "wait",
      timeoutMs: 10_000,
      signal: controller.signal,
    }).catch((e: unknown) => e);
    expect((error as ToolError).details.aborted).toBe(true);
    expect((error as Error).message).toContain("was cancelled");
  });

  it("streams stdout to a watcher", async () => {
    const chunks: string[] = [];
    await runTool(sh("echo one; echo two"), {
      what: "echo",
      timeoutMs: 5_000,
      onStdout: (c) => chunks.push(c),
    });
    expect(chunks.join("")).toBe("one\ntwo\n");
  });

  it("pipes one tool's output into another's input, past what a result keeps in memory", async () => {
    const pipe = new PassThrough();
    // 24 MiB through the pipe: more than the 16 MiB a tool's collected stdout keeps.
    const [produced, counted] = await Promise.all([
      runTool(sh("head -c 25165824 /dev/zero"), {
        what: "produce",
        timeoutMs: 10_000,
        stdoutTo: pipe,
      }),
      runTool(sh("wc -c"), { what: "count", timeoutMs: 10_000, stdin: pipe }),
    ]);
    expect(produced.stdout).toBe("");
    expect(counted.stdout.trim()).toBe("25165824");
  });

  it("reports a reader that exits early by its exit status, not the writer's broken pipe", async () => {
    const pipe = new PassThrough();
    const reader = runTool(sh("exit 2"), { what: "read", timeoutMs: 5_000, stdin: pipe });
    pipe.write("x".repeat(1_000_000));
    const error = await reader.catch((e: unknown) => e);
    pipe.destroy();
    expect((error as ToolError).details.exitCode).toBe(2);
  });

  it("formats commands for people", () => {
    expect(formatCommand({ file: "ctr", args: ["-n", "thaw", "images", "pull", "a b"] })).toBe(
      'ctr -n thaw images pull "a b"',
    );
  });
});
