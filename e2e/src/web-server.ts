import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { seedDemo } from "@thaw/db/seed";
import { generateAgentCallKeyPair } from "@thaw/node-agent-client";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { freePort, startProcess, waitFor } from "./process.ts";

// The built dashboard alone (`next start`, as production runs it), on a database of its own
// (seeded with the demo org) and a BullMQ prefix of its own: what REST clients meet. Tests
// talk to it over HTTP only.

export interface WebServer {
  baseUrl: string;
  database: TestDatabase;
  /** The seeded demo org and its owner. */
  orgId: string;
  userId: string;
  /** The env every process of this server's stack shares (database, Redis, prefix). */
  sharedEnv: Record<string, string>;
  /**
   * The scheduler's agent-call key pair: the web process has only the public half
   * (THAW_AGENT_CALL_PUBLIC_KEY); a scheduler of this stack gets the private one.
   */
  agentCallKeys: { privateKey: string; publicKey: string };
  process: ChildProcess;
  /** The server's recent output, for failure messages. */
  logs: string[];
  stop(): Promise<void>;
}

export interface StartWebServerOptions {
  /** Extra environment for the web process (e.g. THAW_REST_RATE_LIMIT_PER_MINUTE). */
  env?: Record<string, string>;
  /** Flags for the web's node process itself (e.g. --cpu-prof, which NODE_OPTIONS refuses). */
  nodeArgs?: string[];
  logs?: string[];
}

export async function startWebServer(options: StartWebServerOptions = {}): Promise<WebServer> {
  const logs = options.logs ?? [];
  const database = await createTestDatabase();
  const { orgId, userId } = await seedDemo(database.db);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const redisUrl = process.env.REDIS_URL;
  if (!redisUrl)
    throw new Error(
      "REDIS_URL is not set: run 'bash infra/dev/services.sh' and source .data/services.env.",
    );
  const agentCallKeys = generateAgentCallKeyPair();
  const sharedEnv = {
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    NEXT_TELEMETRY_DISABLED: "1",
    // Web enqueues, the scheduler consumes: one prefix, of this stack alone.
    THAW_QUEUE_PREFIX: `e2e-${randomBytes(4).toString("hex")}`,
  };
  const child = startProcess(
    "web",
    "apps/web",
    [
      ...(options.nodeArgs?.length
        ? [process.execPath, ...options.nodeArgs, "node_modules/next/dist/bin/next"]
        : ["node_modules/.bin/next"]),
      "start",
      "--port",
      String(port),
      "--hostname",
      "127.0.0.1",
    ],
    {
      ...sharedEnv,
      BETTER_AUTH_SECRET: randomBytes(32).toString("base64url"),
      BETTER_AUTH_URL: baseUrl,
      THAW_AGENT_CALL_PUBLIC_KEY: agentCallKeys.publicKey,
      // Nothing that could derive a node's credential reaches the web tier, whatever the
      // shell running the tests has (node credentials are random, kept as hashes).
      THAW_NODE_CREDENTIAL_SECRET: undefined,
      ...options.env,
    },
    logs,
  );
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      child.kill("SIGTERM");
      await exited;
    }
    await database.drop();
  };
  try {
    await waitFor(
      "the dashboard answering",
      async () => (await fetch(`${baseUrl}/api/ping`)).ok,
      60_000,
      logs,
    );
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    baseUrl,
    database,
    orgId,
    userId,
    sharedEnv,
    agentCallKeys,
    process: child,
    logs,
    stop,
  };
}
