import type { ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createJoinToken } from "@thaw/core";
import type { TestDatabase } from "@thaw/db/testing";
import { startProcess, waitFor } from "./process.ts";
import { startWebServer } from "./web-server.ts";

export { freePort, startProcess, waitFor } from "./process.ts";

// Starts the real stack for browser tests: the built dashboard (next start), one
// scheduler and a sim agent, on a database of their own and a BullMQ prefix of their own.

export interface Stack {
  baseUrl: string;
  database: TestDatabase;
  orgId: string;
  /** Stops one process of the stack (SIGTERM, graceful) and waits for it to exit. */
  stopProcess(name: "web" | "scheduler" | "agent"): Promise<void>;
  stop(): Promise<void>;
}

export async function startStack({
  simHosts = "g5.xlarge:1,g6e.xlarge:1",
  webEnv = {},
}: { simHosts?: string; webEnv?: Record<string, string> } = {}): Promise<Stack> {
  const logs: string[] = [];
  const web = await startWebServer({ env: webEnv, logs });
  const { baseUrl, database, orgId, sharedEnv: common } = web;

  const children: ChildProcess[] = [web.process];
  const named = new Map<string, ChildProcess>();
  const exited = (c: ChildProcess) =>
    c.exitCode !== null || c.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((r) => c.once("exit", () => r()));
  children.push(
    startProcess(
      "scheduler",
      "apps/scheduler",
      [process.execPath, "--import", "tsx", "src/main.ts"],
      // The sim hosts capture into the operator's store, as start.sh's demo does.
      {
        ...common,
        THAW_AGENT_CALL_KEY: web.agentCallKeys.privateKey,
        THAW_SNAPSHOT_REGISTRY: "localhost:5000/thaw-snapshots",
      },
      logs,
    ),
  );

  const state = mkdtempSync(join(tmpdir(), "thaw-e2e-agent-"));
  const count = simHosts.split(",").reduce((n, p) => n + Number(p.split(":")[1]), 0);
  const tokens: string[] = [];
  for (let i = 0; i < count; i++)
    tokens.push(
      (
        await createJoinToken({
          actor: { type: "system", orgId },
          input: { ttlSeconds: 600 },
          db: database.db,
        })
      ).token,
    );
  writeFileSync(join(state, "join-tokens"), tokens.join("\n") + "\n", { mode: 0o600 });
  children.push(
    startProcess(
      "agent",
      "apps/agent",
      [process.execPath, "--import", "tsx", "src/main.ts"],
      {
        THAW_CONTROL_PLANE_URL: baseUrl,
        THAW_SIM_HOSTS: simHosts,
        THAW_JOIN_TOKENS_FILE: join(state, "join-tokens"),
        THAW_AGENT_STATE_DIR: state,
        THAW_SIM_HOST_PREFIX: "e2e",
        // Simulated phases 50× faster than the durations they report: starts finish in seconds.
        THAW_SIM_TIME_FACTOR: "50",
      },
      logs,
    ),
  );
  for (const [i, name] of ["web", "scheduler", "agent"].entries()) named.set(name, children[i]!);
  const stopAll = async () => {
    for (const child of children) child.kill("SIGTERM");
    await Promise.all(children.map(exited));
    await web.stop();
  };
  try {
    await waitFor(
      "every sim host joining",
      async () => (await database.db.node.count({ where: { state: "ready" } })) === count,
      60_000,
      logs,
    );
    await waitFor(
      "the scheduler reporting healthy",
      async () => (await database.db.serviceHeartbeat.count()) > 0,
      30_000,
      logs,
    );
  } catch (error) {
    // A stack that never came up still stops: its agent would otherwise hold the sim port
    // (and its scheduler the queues) for every later run on this machine.
    await stopAll();
    throw error;
  }

  return {
    baseUrl,
    database,
    orgId,
    async stopProcess(name) {
      const child = named.get(name);
      if (!child) throw new Error(`no process named ${name}`);
      // A process that died earlier, or stopped uncleanly, fails here with its own output
      // rather than as a vague assertion about what the dashboard shows next.
      const lastOutput = () =>
        logs
          .filter((line) => line.startsWith(`[${name}]`))
          .slice(-40)
          .join("");
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(
          `${name} had already exited (${child.signalCode ?? child.exitCode}). Last output:\n${lastOutput()}`,
        );
      child.kill("SIGTERM");
      await exited(child);
      if (child.exitCode !== 0)
        throw new Error(
          `${name} did not stop cleanly (${child.signalCode ?? child.exitCode}). Last output:\n${lastOutput()}`,
        );
    },
    stop: stopAll,
  };
}
