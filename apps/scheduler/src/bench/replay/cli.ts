// pnpm --silent bench:replay --trace <file> --fleet <fleet.json> [--format azure-llm|events]
//                            [--endpoint <name>] [--seed N] [--json]
// Replays a trace once per policy (replay-engine.ts) and prints one JSON document
// (bench-contracts.md). Progress goes to stderr; bad input exits 2 naming the flag and why.
import { parseArgs } from "node:util";
import { InputError, parseFleet, parseTrace } from "./replay-input.ts";
import { POLICIES, replay, type PolicyResult } from "./replay-engine.ts";

function fail(message: string): never {
  console.error(`bench:replay: ${message}`);
  process.exit(2);
}

let values;
try {
  ({ values } = parseArgs({
    options: {
      trace: { type: "string" },
      fleet: { type: "string" },
      format: { type: "string", default: "azure-llm" },
      endpoint: { type: "string" },
      seed: { type: "string", default: "1" },
      json: { type: "boolean", default: false },
    },
    strict: true,
  }));
} catch (error) {
  fail((error as Error).message);
}
if (!values.trace) fail("--trace <file> is required");
if (!values.fleet) fail("--fleet <fleet.json> is required");
if (values.format !== "azure-llm" && values.format !== "events")
  fail(`--format must be 'azure-llm' or 'events', not '${values.format}'`);
const seed = Number(values.seed);
if (!Number.isInteger(seed)) fail(`--seed must be an integer, not '${values.seed}'`);

try {
  const requests = parseTrace(values.trace, values.format, values.endpoint);
  const fleet = parseFleet(values.fleet);
  for (const name of new Set(requests.map((r) => r.endpoint))) fleet.endpoint(name);
  console.error(
    `[bench:replay] ${requests.length} requests, ${new Set(requests.map((r) => r.endpoint)).size} endpoint(s), ${fleet.hosts.length} hosts`,
  );
  const policies: Record<string, PolicyResult> = {};
  for (const policy of POLICIES) {
    const t0 = performance.now();
    policies[policy] = replay({ requests, fleet, policy, seed });
    console.error(
      `[bench:replay] ${policy}: mean wait ${policies[policy].meanWaitSeconds} s (${((performance.now() - t0) / 1000).toFixed(1)} s to replay)`,
    );
  }
  console.log(JSON.stringify({ policies }, null, values.json ? 0 : 2));
} catch (error) {
  if (error instanceof InputError) fail(error.message);
  throw error;
}
