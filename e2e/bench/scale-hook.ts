// pnpm --silent bench:scale-hook [--seconds 8] [--connections 10] [--rounds 3] [--endpoints 50] [--json]
//
// Latency of the autoscaler hooks under a bounded loopback load (autocannon), beside a bare
// Next route (GET /api/ping) served by the same process in the same run:
//   - PUT  /api/v1/endpoints/{e}/replicas  (API key → rate limit → row lock → ScaleEvent +
//     audit → reconcile enqueued), alternating 1 and 2 so that every request writes; once with
//     every connection on one endpoint (they queue on its row lock), once spread round-robin
//     over --endpoints endpoints (an autoscaler driving a fleet: the realistic case);
//   - POST /api/v1/endpoints/{e}/signals   (the KPA rule over the endpoint's stored windows).
// Targets take turns for --rounds rounds (noisy machines: each figure is the median of its
// rounds). Everything runs against the built dashboard (`next start`) on 127.0.0.1, on a
// database and a BullMQ prefix of its own; nothing is left behind. One JSON document on
// stdout, progress on stderr.
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { createApiKey } from "@thaw/core";
import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase } from "@thaw/db/testing";
import autocannon from "autocannon";
import { freePort, startProcess, waitFor } from "../src/stack.ts";
import { generateAgentCallKeyPair } from "@thaw/node-agent-client";
import { clearQueuePrefix, ensureDashboardBuilt, median } from "./bench-kit.ts";

type Target = "bareRoute" | "scaleReplicas" | "scaleReplicasSpread" | "signals";
/** The bar for the spread hook on this machine: sustained rate and tail latency. */
const SPREAD_TARGET = { requestsPerSecond: 200, p99Ms: 250 };
const ENDPOINT = "llama-3-2-3b-instruct"; // demo bounds 0–6: 1 and 2 are both in range

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "8" },
    connections: { type: "string", default: "10" },
    rounds: { type: "string", default: "3" },
    endpoints: { type: "string", default: "50" },
    json: { type: "boolean", default: false },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const rounds = Number(values.rounds);
const spreadEndpoints = Number(values.endpoints);
if (
  !(Number.isInteger(seconds) && seconds >= 1 && seconds <= 60) ||
  !(Number.isInteger(connections) && connections >= 1 && connections <= 100) ||
  !(Number.isInteger(rounds) && rounds >= 1 && rounds <= 10) ||
  !(Number.isInteger(spreadEndpoints) && spreadEndpoints >= 1 && spreadEndpoints <= 200)
) {
  console.error(
    "usage: bench:scale-hook [--seconds 1..60] [--connections 1..100] [--rounds 1..10] [--endpoints 1..200]",
  );
  process.exit(2);
}
const redisUrl = process.env.REDIS_URL;
if (!redisUrl) {
  console.error("REDIS_URL is not set: run 'bash infra/dev/services.sh' first.");
  process.exit(2);
}

const say = (message: string) => process.stderr.write(`[bench:scale-hook] ${message}\n`);

ensureDashboardBuilt(say);

const database = await createTestDatabase();
const prefix = `bench-${randomBytes(4).toString("hex")}`;
const logs: string[] = [];
let web: ChildProcess | undefined;
try {
  const { orgId } = await seedDemo(database.db);
  const { secret } = await createApiKey({
    actor: { type: "system", orgId },
    input: { name: "bench", scopes: ["endpoints:scale", "endpoints:write"] },
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
      // The key's, the org's and the address's rate limits would turn the measurement into
      // 429s (every request comes from 127.0.0.1); their Redis round trips are still paid.
      THAW_REST_RATE_LIMIT_PER_MINUTE: "1000000",
      THAW_REST_RATE_LIMIT_PER_ORG_PER_MINUTE: "1000000",
      THAW_API_RATE_LIMIT_PER_ADDRESS_PER_MINUTE: "1000000",
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
  // The spread target's endpoints, created the way a client would (REST, 201 each).
  const spreadSlugs = Array.from({ length: spreadEndpoints }, (_, i) => `bench-spread-${i}`);
  for (const slug of spreadSlugs) {
    const created = await fetch(`${baseUrl}/api/v1/endpoints`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({
        slug,
        name: slug,
        gpuType: "L40S",
        maxReplicas: 2,
        desiredReplicas: 0,
        deployment: {
          imageRef: "registry.example.com/vllm-openai:v0.11.0",
          imageBytes: 7_700_000_000,
          modelSource: "hf://Qwen/Qwen2.5-7B-Instruct",
          modelBytes: 15_200_000_000,
          modelFormat: "safetensors",
          engine: "vllm",
        },
      }),
    });
    if (created.status !== 201) {
      throw new Error(`creating ${slug} answered ${created.status}: ${await created.text()}`);
    }
  }
  let flip = 0;
  let spreadTurn = 0;
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
    scaleReplicasSpread: {
      url: `${baseUrl}/api/v1/endpoints/${spreadSlugs[0]}/replicas`,
      method: "PUT",
      headers: auth,
      requests: [
        {
          setupRequest: (request) => {
            // Each endpoint in turn; a full cycle flips every endpoint between 1 and 2.
            const turn = spreadTurn++;
            const slug = spreadSlugs[turn % spreadSlugs.length]!;
            const replicas = 1 + (Math.floor(turn / spreadSlugs.length) % 2);
            return {
              ...request,
              path: `/api/v1/endpoints/${slug}/replicas`,
              body: JSON.stringify({ replicas }),
            };
          },
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
  const overBare = (target: Target) =>
    summary[target].latencyMs.p50 / Math.max(summary.bareRoute.latencyMs.p50, 0.001);
  const spread = summary.scaleReplicasSpread;
  const output = {
    load: {
      connections,
      secondsPerRound: seconds,
      rounds,
      host: "127.0.0.1",
      spreadEndpoints,
    },
    ...summary,
    scaleEventsWritten: writes,
    p50OverBareRoute: {
      scaleReplicas: overBare("scaleReplicas"),
      scaleReplicasSpread: overBare("scaleReplicasSpread"),
      signals: overBare("signals"),
    },
    spreadTarget: {
      ...SPREAD_TARGET,
      met:
        spread.requestsPerSecond >= SPREAD_TARGET.requestsPerSecond &&
        spread.latencyMs.p99 < SPREAD_TARGET.p99Ms &&
        spread.non2xx === 0,
    },
  };
  process.stdout.write(`${JSON.stringify(output, null, values.json ? 0 : 2)}\n`);
} finally {
  web?.kill("SIGTERM");
  if (web && web.exitCode === null) await new Promise((r) => web!.once("exit", r));
  await database.drop();
  // The reconcile jobs the hooks enqueued, under this run's prefix only.
  await clearQueuePrefix(redisUrl, prefix);
}
