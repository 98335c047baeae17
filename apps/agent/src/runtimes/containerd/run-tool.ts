import { spawn } from "node:child_process";
import path from "node:path";
import { type Readable, type Writable } from "node:stream";

// Runs one external tool (ctr, ctr-remote, criu, cuda-checkpoint) with an argument array —
// never through a shell — under a deadline, and turns every failure into an error that says
// what was being done, the exact command, the tool's own stderr, and what to try.

/** One command line: the executable (a name looked up on PATH, or a path) and its arguments. */
export interface ToolCommand {
  file: string;
  args: readonly string[];
}

export interface RunToolOptions {
  /** What the command is for, in words: "pull the image". */
  what: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Environment for the child; the agent's own when absent. */
  env?: NodeJS.ProcessEnv;
  /** Streams stdout as it arrives (e.g. to notice when `ctr image pull` starts unpacking). */
  onStdout?: (chunk: string) => void;
  /** The child's stdin, read from this stream (another tool's output: one half of a pipe). */
  stdin?: Readable;
  /**
   * Where the child's stdout goes instead of being collected (the result's stdout is then
   * empty): the other half of a pipe, for output larger than what is kept in memory.
   */
  stdoutTo?: Writable;
  /** Added to the error message: what the operator should do about a failure. */
  hint?: string;
  /**
   * Strings that must never be reported (a registry password, its Basic form, a token): replaced
   * by [redacted] in the error's message, command and stderr, whatever the tool printed.
   */
  secrets?: readonly string[];
}

export interface ToolResult {
  stdout: string;
  /** stdout as bytes, for a tool that prints binary (`ctr content get` of a protobuf blob). */
  stdoutBytes: Buffer;
  stderr: string;
  seconds: number;
}

const MAX_STDOUT_BYTES = 16 * 1024 * 1024;
const STDERR_TAIL_BYTES = 8 * 1024;
const KILL_GRACE_MS = 2_000;

export class ToolError extends Error {
  override readonly name = "ToolError";
  constructor(
    message: string,
    readonly command: ToolCommand,
    readonly details: {
      exitCode: number | null;
      signal: NodeJS.Signals | null;
      stderr: string;
      timedOut: boolean;
      aborted: boolean;
      notFound: boolean;
    },
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  get tool(): string {
    return path.basename(this.command.file);
  }
}

/** The command as a person would type it (for messages and logs only; never executed). */
export function formatCommand(command: ToolCommand): string {
  const quote = (arg: string) => (/^[A-Za-z0-9_./:=@%+,-]+$/.test(arg) ? arg : JSON.stringify(arg));
  return [command.file, ...command.args].map(quote).join(" ");
}

export function runTool(command: ToolCommand, options: RunToolOptions): Promise<ToolResult> {
  const started = performance.now();
  return new Promise<ToolResult>((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(failure(command, options, "was cancelled before it started", {}));
      return;
    }
    const env = options.env ? { env: options.env } : {};
    const input = options.stdin;
    // stdin is /dev/null unless the child reads a stream (one half of a pipe).
    const child = input
      ? spawn(command.file, command.args, { stdio: ["pipe", "pipe", "pipe"], ...env })
      : spawn(command.file, command.args, { stdio: ["ignore", "pipe", "pipe"], ...env });
    if (input && child.stdin) {
      // A child that exits before reading everything (a failed tar) closes the pipe: its exit
      // status is the failure to report, not the EPIPE of the write.
      child.stdin.on("error", () => undefined);
      input.pipe(child.stdin);
    }

    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = "";
    let timedOut = false;
    let aborted = false;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;

    const terminate = () => {
      child.kill("SIGTERM");
      killTimer = setTimeout(() => child.kill("SIGKILL"), KILL_GRACE_MS);
      killTimer.unref();
    };
    const deadline = setTimeout(() => {
      timedOut = true;
      terminate();
    }, options.timeoutMs);
    const onAbort = () => {
      aborted = true;
      terminate();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const finish = () => {
      settled = true;
      clearTimeout(deadline);
      if (killTimer) clearTimeout(killTimer);
      options.signal?.removeEventListener("abort", onAbort);
    };

    if (options.stdoutTo) child.stdout.pipe(options.stdoutTo);
    else
      child.stdout.on("data", (chunk: Buffer) => {
        if (stdoutBytes < MAX_STDOUT_BYTES) {
          stdout.push(chunk);
          stdoutBytes += chunk.length;
        }
        options.onStdout?.(chunk.toString("utf8"));
      });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_TAIL_BYTES);
    });
    child.on("error", (error: NodeJS.ErrnoException) => {
      if (settled) return;
      finish();
      const notFound = error.code === "ENOENT";
      reject(
        failure(
          command,
          options,
          notFound
            ? `could not run: ${path.basename(command.file)} was not found (is it installed and on the agent's PATH?)`
            : `could not run: ${error.message}`,
          { notFound, cause: error },
        ),
      );
    });
    // A killed tool settles when it exits: a grandchild holding its stdout must not keep the
    // caller waiting for the pipes to close.
    child.on("exit", () => {
      if (!timedOut && !aborted) return;
      child.stdout.destroy();
      child.stderr.destroy();
    });
    child.on("close", (exitCode, signal) => {
      if (settled) return;
      finish();
      const seconds = (performance.now() - started) / 1000;
      if (exitCode === 0 && !timedOut && !aborted) {
        const bytes = Buffer.concat(stdout);
        resolve({ stdout: bytes.toString("utf8"), stdoutBytes: bytes, stderr, seconds });
        return;
      }
      const how = timedOut
        ? `timed out after ${(options.timeoutMs / 1000).toFixed(1)} s and was stopped`
        : aborted
          ? "was cancelled"
          : exitCode !== null
            ? `exited with code ${exitCode}`
            : `was killed by ${signal ?? "a signal"}`;
      reject(failure(command, options, how, { exitCode, signal, stderr, timedOut, aborted }));
    });
  });
}

function failure(
  command: ToolCommand,
  options: RunToolOptions,
  how: string,
  details: Partial<ToolError["details"]> & { cause?: unknown },
): ToolError {
  const redact = redactor(options.secrets ?? []);
  const stderr = redact((details.stderr ?? "").trim());
  const shown: ToolCommand = { file: command.file, args: command.args.map(redact) };
  const parts = [`could not ${options.what}: \`${formatCommand(shown)}\` ${how}`];
  if (stderr) parts.push(`stderr: ${lastLines(stderr, 12)}`);
  if (options.hint) parts.push(options.hint);
  return new ToolError(
    redact(parts.join(". ")),
    shown,
    {
      exitCode: details.exitCode ?? null,
      signal: details.signal ?? null,
      stderr,
      timedOut: details.timedOut ?? false,
      aborted: details.aborted ?? false,
      notFound: details.notFound ?? false,
    },
    details.cause === undefined ? undefined : { cause: details.cause },
  );
}

/** Replaces every occurrence of each secret (longest first, so no part of one survives). */
export function redactor(secrets: readonly string[]): (text: string) => string {
  const sorted = [...new Set(secrets.filter((secret) => secret.length > 0))].sort(
    (a, b) => b.length - a.length,
  );
  return (text) => sorted.reduce((t, secret) => t.split(secret).join("[redacted]"), text);
}

function lastLines(text: string, count: number): string {
  const lines = text.split("\n");
  return (lines.length > count ? ["…", ...lines.slice(-count)] : lines).join("\n");
}
