import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createJoinToken } from "@thaw/core";
import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";

// Starts the real stack for browser tests: the built dashboard (next start), one
// scheduler and a sim agent, on a database of their own and a BullMQ prefix of their own.

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export interface Stack {
  baseUrl: string;
  database: TestDatabase;
  orgId: string;
  /** Stops one process of the stack (SIGTERM, graceful) and waits for it to exit. */
  stopProcess(name: "web" | "scheduler" | "agent"): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

export function startProcess(
  name: string,
  cwd: string,
  command: string[],
  env: NodeJS.ProcessEnv,
  logs: string[],
): ChildProcess {
  const [bin, ...args] = command as [string, ...string[]];
  const child = spawn(bin, args, {
    cwd: join(root, cwd),
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const keep = (chunk: Buffer) => {
    logs.push(`[${name}] ${chunk.toString()}`);
    if (logs.length > 400) logs.shift();
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  return child;
}

export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  logs: string[],
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(
    `${what} did not happen within ${timeoutMs / 1000} s. Last output:\n${logs.slice(-40).join("")}`,
  );
}

export async function startStack({ simHosts = "g5.xlarge:1,g6e.xlarge:1" } = {}): Promise<Stack> {
  const logs: string[] = [];
  const database = await createTestDatabase();
  const { orgId } = await seedDemo(database.db);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const redisUrl = process.env.REDIS_URL;
  if (!redisUrl)
    throw new Error(
      "REDIS_URL is not set: run 'bash infra/dev/services.sh' and source .data/services.env.",
    );
  const common = {
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    NEXT_TELEMETRY_DISABLED: "1",
    // Web derives node credentials from it; the scheduler derives them again to call agents.
    THAW_NODE_CREDENTIAL_SECRET: randomBytes(32).toString("base64url"),
    // Web enqueues, the scheduler consumes: one prefix, of this stack alone.
    THAW_QUEUE_PREFIX: `e2e-${randomBytes(4).toString("hex")}`,
  };

  const children: ChildProcess[] = [];
  const named = new Map<string, ChildProcess>();
  const exited = (c: ChildProcess) =>
    c.exitCode !== null || c.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((r) => c.once("exit", () => r()));
  children.push(
    startProcess(
      "web",
      "apps/web",
      ["node_modules/.bin/next", "start", "--port", String(port), "--hostname", "127.0.0.1"],
      {
        ...common,
        BETTER_AUTH_SECRET: randomBytes(32).toString("base64url"),
        BETTER_AUTH_URL: baseUrl,
      },
      logs,
    ),
  );
  children.push(
    startProcess(
      "scheduler",
      "apps/scheduler",
      [process.execPath, "--import", "tsx", "src/main.ts"],
      common,
      logs,
    ),
  );
  await waitFor(
    "the dashboard answering",
    async () => (await fetch(`${baseUrl}/sign-in`)).ok,
    60_000,
    logs,
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
    async stop() {
      for (const child of children) child.kill("SIGTERM");
      await Promise.all(children.map(exited));
      await database.drop();
    },
  };
}
