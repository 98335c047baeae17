// Replays a request trace as load signals against a running Thaw, so that the demo shows
// cold starts flowing: every --interval seconds it posts the trace's requests in flight to
// POST /api/v1/endpoints/{endpoint}/signals, the way an autoscaler or gateway would, and
// the endpoint scales from zero, up and back down through the KPA rule and the scheduler.
//
//   tsx src/cli/replay-trace-signals.ts [--trace ../shared/data/traces/AzureLLMInferenceTrace_code.csv]
//     [--format azure-llm|events] [--endpoint llama-3-2-1b-gguf] [--org demo] [--speed 4]
//     [--interval 2] [--url http://127.0.0.1:3000] [--once]
//
// It makes its own API key (scope endpoints:scale) in the org and revokes it when it stops.
// The trace's clock runs --speed times faster than the wall clock; it loops at the end.
import { parseArgs } from "node:util";
import { createApiKey, revokeApiKey } from "@thaw/core";
import { createDbClient } from "@thaw/db";
import { InputError, parseTrace } from "../bench/replay/replay-input.ts";
import { inFlightCounter } from "../demo/trace-load.ts";
import { loadCliEnv } from "./cli-env.ts";

const { values } = parseArgs({
  options: {
    trace: { type: "string", default: "../shared/data/traces/AzureLLMInferenceTrace_code.csv" },
    format: { type: "string", default: "azure-llm" },
    endpoint: { type: "string", default: "llama-3-2-1b-gguf" },
    org: { type: "string", default: "demo" },
    speed: { type: "string", default: "4" },
    interval: { type: "string", default: "2" },
    url: { type: "string", default: "http://127.0.0.1:3000" },
    once: { type: "boolean", default: false },
  },
});
const speed = Number(values.speed);
const intervalSeconds = Number(values.interval);
const say = (message: string) => process.stderr.write(`[trace-replay] ${message}\n`);
if (
  !(speed > 0 && speed <= 1000) ||
  !(intervalSeconds >= 0.5 && intervalSeconds <= 60) ||
  (values.format !== "azure-llm" && values.format !== "events")
) {
  say(
    "--speed: 0–1000 (exclusive of 0); --interval: 0.5–60 seconds; --format: azure-llm or events",
  );
  process.exit(2);
}

let requests;
try {
  requests = parseTrace(values.trace, values.format, values.endpoint).filter(
    (r) => values.format === "azure-llm" || r.endpoint === values.endpoint,
  );
} catch (error) {
  if (!(error instanceof InputError)) throw error;
  say(error.message);
  process.exit(2);
}
if (requests.length === 0) {
  say(`--trace: no requests for endpoint '${values.endpoint}' in ${values.trace}`);
  process.exit(2);
}
const span = Math.max(...requests.map((r) => r.at + r.seconds));

const db = createDbClient({ url: loadCliEnv().DATABASE_URL, maxConnections: 1 });
const org = await db.org.findUnique({ where: { slug: values.org } });
if (!org) {
  say(`--org: no org '${values.org}' (seed it with 'pnpm --filter @thaw/db seed').`);
  await db.$disconnect();
  process.exit(2);
}
const system = { type: "system", orgId: org.id } as const;
const key = await createApiKey({
  actor: system,
  input: { name: `trace replay ${new Date().toISOString()}`, scopes: ["endpoints:scale"] },
  db,
});

let stopping = false;
async function stop(code: number): Promise<never> {
  stopping = true;
  await revokeApiKey({ actor: system, input: { id: key.id }, db }).catch(() => undefined);
  await db.$disconnect();
  process.exit(code);
}
process.on("SIGINT", () => void stop(0));
process.on("SIGTERM", () => void stop(0));

say(
  `${requests.length} requests over ${(span / 60).toFixed(0)} trace minutes, ${speed}× → ${values.endpoint} every ${intervalSeconds} s`,
);
let loop = 0;
let lastDesired: number | undefined;
do {
  const inFlight = inFlightCounter(requests);
  const started = Date.now();
  for (;;) {
    if (stopping) break;
    const traceSeconds = ((Date.now() - started) / 1000) * speed;
    if (traceSeconds > span) break;
    const inFlightRequests = inFlight(traceSeconds);
    try {
      const response = await fetch(
        `${values.url}/api/v1/endpoints/${encodeURIComponent(values.endpoint)}/signals`,
        {
          method: "POST",
          headers: { authorization: `Bearer ${key.secret}`, "content-type": "application/json" },
          body: JSON.stringify({ inFlightRequests, queueDepth: 0 }),
          signal: AbortSignal.timeout(10_000),
        },
      );
      const body = (await response.json()) as {
        desiredReplicas?: number;
        mode?: string;
        error?: { message: string };
      };
      if (!response.ok) say(`signals: ${response.status} ${body.error?.message ?? ""}`);
      else if (body.desiredReplicas !== lastDesired) {
        say(
          `trace ${traceSeconds.toFixed(0)} s: ${inFlightRequests} in flight → ${body.desiredReplicas} replicas (${body.mode})`,
        );
        lastDesired = body.desiredReplicas;
      }
    } catch (error) {
      // The dashboard restarting, say: keep replaying, as a gateway would.
      say(`signals: ${error instanceof Error ? error.message : String(error)}`);
    }
    await new Promise((r) => setTimeout(r, intervalSeconds * 1000));
  }
  loop++;
  if (!stopping && !values.once) say(`trace done (${loop}); again from the start`);
} while (!stopping && !values.once);
await stop(0);
