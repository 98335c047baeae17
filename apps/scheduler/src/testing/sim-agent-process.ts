import { type ChildProcess, spawn } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

// A real agent process (apps/agent, sim runtime) for scheduler tests: spawned exactly as the
// README's run command spawns it, with its own state directory and join tokens.

const AGENT_DIR = fileURLToPath(new URL("../../../agent", import.meta.url));

export interface SimAgentProcess {
  child: ChildProcess;
  output: () => string;
  /** SHA-256 of the agent's TLS certificate, once it has made one at start (what it pins). */
  certSha256: () => string | undefined;
  stop(): Promise<void>;
}

export function startSimAgent(opts: {
  controlPlaneUrl: string;
  joinTokens: string[];
  hosts: string;
  prefix: string;
  env?: Record<string, string>;
}): SimAgentProcess {
  const state = mkdtempSync(join(tmpdir(), "thaw-scheduler-agent-"));
  writeFileSync(join(state, "join-tokens"), opts.joinTokens.join("\n") + "\n");
  // One process (not the tsx CLI, which SIGKILLs a child slow to confirm a relayed signal).
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: AGENT_DIR,
    env: {
      PATH: process.env.PATH,
      THAW_CONTROL_PLANE_URL: opts.controlPlaneUrl,
      THAW_SIM_HOSTS: opts.hosts,
      THAW_SIM_HOST_PREFIX: opts.prefix,
      THAW_JOIN_TOKENS_FILE: join(state, "join-tokens"),
      THAW_AGENT_STATE_DIR: state,
      THAW_AGENT_LISTEN: "127.0.0.1:0",
      THAW_TELEMETRY_FLUSH_MS: "50",
      LOG_LEVEL: "warn",
      ...opts.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const certFile = join(state, "tls", "agent-cert.pem");
  return {
    child,
    output: () => output,
    certSha256: () =>
      existsSync(certFile)
        ? new X509Certificate(readFileSync(certFile)).fingerprint256.replace(/:/g, "").toLowerCase()
        : undefined,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
    },
  };
}
