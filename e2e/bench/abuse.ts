// pnpm --silent bench:abuse [--bodies 32] [--body-mb 50] [--streams 2000] [--json]
//
// What an anonymous client and a leaked key can do to the web tier now, measured on the
// built dashboard (`next start`, on a database and BullMQ prefix of its own, 127.0.0.1 only)
// beside its idle baseline from the same run:
//   - idle: web RSS, Redis clients, GET /api/health p50/p99;
//   - --bodies concurrent --body-mb MB JSON bodies to /api/auth/sign-in/email (declared
//     length, as the review sent them): how many are refused with 413, RSS and health p99
//     while they arrive;
//   - --streams GET /api/v1/stream opened with one leaked key: how many are accepted (the
//     per-key cap) and refused (429), Redis clients and RSS while they are open.
// Every loop is bounded in count and time. One JSON document on stdout, progress on stderr.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { request } from "node:http";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { quantile } from "@thaw/core/statistics";
import { Redis } from "ioredis";
import { newApiKey } from "../src/rest/rest-client.ts";
import { rssMiB } from "../src/abuse/probes.ts";
import { startWebServer } from "../src/web-server.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { values } = parseArgs({
  options: {
    bodies: { type: "string", default: "32" },
    "body-mb": { type: "string", default: "50" },
    streams: { type: "string", default: "2000" },
    json: { type: "boolean", default: false },
  },
});
const bodies = Number(values.bodies);
const bodyMb = Number(values["body-mb"]);
const streams = Number(values.streams);
if (
  !(Number.isInteger(bodies) && bodies >= 1 && bodies <= 256) ||
  !(Number.isInteger(bodyMb) && bodyMb >= 1 && bodyMb <= 200) ||
  !(Number.isInteger(streams) && streams >= 1 && streams <= 5000)
) {
  console.error("usage: bench:abuse [--bodies 1..256] [--body-mb 1..200] [--streams 1..5000]");
  process.exit(2);
}
if (!process.env.REDIS_URL) {
  console.error("REDIS_URL is not set: run 'bash infra/dev/services.sh' first.");
  process.exit(2);
}
const say = (message: string) => process.stderr.write(`[bench:abuse] ${message}\n`);
if (!existsSync(join(root, "apps/web/.next/BUILD_ID"))) {
  say("building the dashboard once (pnpm --filter @thaw/web build)");
  if (spawnSync("pnpm", ["--filter", "@thaw/web", "build"], { cwd: root, stdio: "inherit" }).status)
    process.exit(1);
}

const quantileOf = (xs: number[], q: number) => quantile(xs, q) ?? 0;
const round = (x: number) => Math.round(x * 10) / 10;

const server = await startWebServer();
const redis = new Redis(process.env.REDIS_URL);
const pid = server.process.pid!;
const redisClients = async () =>
  ((await redis.call("CLIENT", "LIST")) as string).trim().split("\n").length;

/** GET /api/health `count` times, sequentially; latencies in ms. */
async function healthLatencies(count: number, until?: () => boolean): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count && !(until?.() ?? false); i++) {
    const t0 = performance.now();
    await fetch(`${server.baseUrl}/api/health`).then((r) => r.arrayBuffer());
    out.push(performance.now() - t0);
  }
  return out;
}

/**
 * One large auth body (declared length), streamed; resolves with the status, or 0 when the
 * server answered and closed the connection before this client, still writing, read it.
 */
function bigAuthBody(bytes: number): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      `${server.baseUrl}/api/auth/sign-in/email`,
      {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(bytes) },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on("error", () => resolve(0));
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    let sent = 0;
    const pump = () => {
      while (sent < bytes) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
}

try {
  await healthLatencies(20); // warm the routes
  const idle = await healthLatencies(200);
  const baseline = {
    webRssMiB: round(rssMiB(pid)),
    redisClients: await redisClients(),
    healthP50Ms: round(quantileOf(idle, 0.5)),
    healthP99Ms: round(quantileOf(idle, 0.99)),
  };
  say(`idle: ${JSON.stringify(baseline)}`);

  say(`${bodies} × ${bodyMb} MB auth bodies`);
  let peakRss = rssMiB(pid);
  let done = false;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMiB(pid))), 50);
  const health = healthLatencies(2_000, () => done);
  const statuses = await Promise.all(
    Array.from({ length: bodies }, () => bigAuthBody(bodyMb * 1024 * 1024)),
  );
  done = true;
  const duringBodies = await health;
  clearInterval(sampler);
  const authBodies = {
    sent: bodies,
    refused413: statuses.filter((s) => s === 413).length,
    /** Closed by the server mid-upload, the refusal unread: nothing was buffered either. */
    resetMidUpload: statuses.filter((s) => s === 0).length,
    otherStatuses: [...new Set(statuses.filter((s) => s !== 413 && s !== 0))],
    webRssPeakMiB: round(peakRss),
    healthP99Ms: round(quantileOf(duringBodies, 0.99)),
  };
  say(`auth bodies: ${JSON.stringify(authBodies)}`);

  say(`${streams} live streams with one key`);
  const key = await newApiKey(server.database.db, server.orgId, ["endpoints:read"]);
  const aborts: AbortController[] = [];
  const opened = await Promise.all(
    Array.from({ length: streams }, async () => {
      const abort = new AbortController();
      aborts.push(abort);
      try {
        const r = await fetch(`${server.baseUrl}/api/v1/stream`, {
          headers: { authorization: `Bearer ${key}` },
          signal: abort.signal,
        });
        if (r.status !== 200) await r.arrayBuffer();
        return r.status;
      } catch {
        return 0;
      }
    }),
  );
  const whileOpen = await healthLatencies(200);
  const liveStreams = {
    attempted: streams,
    accepted: opened.filter((s) => s === 200).length,
    refused429: opened.filter((s) => s === 429).length,
    redisClients: await redisClients(),
    webRssMiB: round(rssMiB(pid)),
    healthP99Ms: round(quantileOf(whileOpen, 0.99)),
  };
  for (const a of aborts) a.abort();
  say(`live streams: ${JSON.stringify(liveStreams)}`);
  const result = { baseline, authBodies, liveStreams };
  process.stdout.write(`${JSON.stringify(result, null, values.json ? 0 : 2)}\n`);
} finally {
  redis.disconnect();
  await server.stop();
}
