// pnpm --silent bench:scale-hook [--seconds 8] [--connections 10] [--rounds 3] [--json]
//
// Latency of the autoscaler hooks under a bounded loopback load (autocannon), beside a bare
// Next route (GET /api/ping) served by the same process in the same run:
//   - PUT  /api/v1/endpoints/{e}/replicas  (API key → rate limit → row lock → ScaleEvent +
//     audit → reconcile enqueued), alternating 1 and 2 so that every request writes;
//   - POST /api/v1/endpoints/{e}/signals   (the KPA rule over the endpoint's stored windows).
// Targets take turns for --rounds rounds (noisy machines: each figure is the median of its
// rounds). Everything runs against the built dashboard (`next start`) on 127.0.0.1, on a
// database and a BullMQ prefix of its own; nothing is left behind. One JSON document on
// stdout, progress on stderr.
import { spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createApiKey } from "@thaw/core";
import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase } from "@thaw/db/testing";
import autocannon from "autocannon";
import { Redis } from "ioredis";
import { freePort, startProcess, waitFor } from "../src/stack.ts";
import { generateAgentCallKeyPair } from "@thaw/node-agent-client";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
type Target = "bareRoute" | "scaleReplicas" | "signals";
const ENDPOINT = "llama-3-2-3b-instruct"; // demo bounds 0–6: 1 and 2 are both in range

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "8" },
    connections: { type: "string", default: "10" },
    rounds: { type: "string", default: "3" },
    json: { type: "boolean", default: false },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const rounds = Number(values.rounds);
if (
  !(Number.isInteger(seconds) && seconds >= 1 && seconds <= 60) ||
  !(Number.isInteger(connections) && connections >= 1 && connections <= 100) ||
  !(Number.isInteger(rounds) && rounds >= 1 && rounds <= 10)
) {
  console.error(
    "usage: bench:scale-hook [--seconds 1..60] [--connections 1..100] [--rounds 1..10]",
  );
  process.exit(2);
}
const redisUrl = process.env.REDIS_URL;
if (!redisUrl) {
  console.error("REDIS_URL is not set: run 'bash infra/dev/services.sh' first.");
  process.exit(2);
}

const say = (message: string) => process.stderr.write(`[bench:scale-hook] ${message}\n`);

if (!existsSync(join(root, "apps/web/.next/BUILD_ID"))) {
  say("building the dashboard once (pnpm --filter @thaw/web build)");
  const build = spawnSync("pnpm", ["--filter", "@thaw/web", "build"], {
    cwd: root,
    stdio: ["ignore", process.stderr, process.stderr],
  });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const database = await createTestDatabase();
const prefix = `bench-${randomBytes(4).toString("hex")}`;
const logs: string[] = [];
let web: ChildProcess | undefined;
try {
  const { orgId } = await seedDemo(database.db);
  const { secret } = await createApiKey({
    actor: { type: "system", orgId },
    input: { name: "bench", scopes: ["endpoints:scale"] },
    db: database.db,
  });
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  web = startProcess(
    "web",
    "apps/web",
    ["node_modules/.bin/next", "start", "--port", String(port), "--hostname", "127.0.0.1"],
    {
      DATABASE_URL: database.url,
      REDIS_URL: redisUrl,
      THAW_QUEUE_PREFIX: prefix,
      NEXT_TELEMETRY_DISABLED: "1",
      LOG_LEVEL: "warn",
      BETTER_AUTH_SECRET: randomBytes(32).toString("base64url"),
      BETTER_AUTH_URL: baseUrl,
      // No agent joins here; the web tier only answers joins with the scheduler's public key.
      THAW_AGENT_CALL_PUBLIC_KEY: generateAgentCallKeyPair().publicKey,
      // The key's own rate limit would turn the measurement into 429s.
      THAW_REST_RATE_LIMIT_PER_MINUTE: "1000000",
      THAW_REST_RATE_LIMIT_PER_ORG_PER_MINUTE: "1000000",
    },
    logs,
  );
  await waitFor(
    "the dashboard answering",
    async () => (await fetch(`${baseUrl}/api/ping`)).ok,
    60_000,
    logs,
  );

  const auth = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
  let flip = 0;
  const targets: Record<Target, autocannon.Options> = {
    bareRoute: { url: `${baseUrl}/api/ping` },
    scaleReplicas: {
      url: `${baseUrl}/api/v1/endpoints/${ENDPOINT}/replicas`,
      method: "PUT",
      headers: auth,
      requests: [
        {
          setupRequest: (request) => ({
            ...request,
            body: JSON.stringify({ replicas: 1 + (flip++ % 2) }),
          }),
        },
      ],
    },
    signals: {
      url: `${baseUrl}/api/v1/endpoints/${ENDPOINT}/signals`,
      method: "POST",
      headers: auth,
      body: JSON.stringify({ inFlightRequests: 12, queueDepth: 4 }),
    },
  };

  const run = (options: autocannon.Options, duration: number) =>
    autocannon({ connections, duration, ...options });
  // Warm-up: Next compiles nothing at run time, but the first requests open the pools.
  for (const options of Object.values(targets)) await run(options, 2);

  const samples: Record<string, { p50: number; p99: number; rps: number; non2xx: number }[]> = {};
  for (let round = 1; round <= rounds; round++) {
    for (const [name, options] of Object.entries(targets)) {
      const result = await run(options, seconds);
      const non2xx = result.non2xx + result.errors + result.timeouts;
      (samples[name] ??= []).push({
        p50: result.latency.p50,
        p99: result.latency.p99,
        rps: result.requests.average,
        non2xx,
      });
      say(
        `round ${round} ${name}: p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ${result.requests.average} req/s, ${non2xx} not 2xx`,
      );
    }
  }
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const mid = Math.floor(s.length / 2);
    return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  };
  const summary = Object.fromEntries(
    Object.entries(samples).map(([name, xs]) => [
      name,
      {
        latencyMs: { p50: median(xs.map((x) => x.p50)), p99: median(xs.map((x) => x.p99)) },
        requestsPerSecond: median(xs.map((x) => x.rps)),
        non2xx: xs.reduce((n, x) => n + x.non2xx, 0),
      },
    ]),
  ) as Record<
    Target,
    { latencyMs: { p50: number; p99: number }; requestsPerSecond: number; non2xx: number }
  >;
  const writes = await database.db.scaleEvent.count();
  const output = {
    load: { connections, secondsPerRound: seconds, rounds, host: "127.0.0.1" },
    ...summary,
    scaleEventsWritten: writes,
    p50OverBareRoute: {
      scaleReplicas:
        summary.scaleReplicas.latencyMs.p50 / Math.max(summary.bareRoute.latencyMs.p50, 0.001),
      signals: summary.signals.latencyMs.p50 / Math.max(summary.bareRoute.latencyMs.p50, 0.001),
    },
  };
  process.stdout.write(`${JSON.stringify(output, null, values.json ? 0 : 2)}\n`);
} finally {
  web?.kill("SIGTERM");
  if (web && web.exitCode === null) await new Promise((r) => web!.once("exit", r));
  await database.drop();
  // The reconcile jobs the hooks enqueued, under this run's prefix only.
  const redis = new Redis(redisUrl);
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 500);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== "0");
  redis.disconnect();
}
