// pnpm --silent bench:what-if [--rounds 7] [--peak 16] [--days 7]
//
// How long an endpoint's what-if takes (the bar: a week of one endpoint's load in
// under 2 s), measured through the use case the scheduler's whatIf worker runs —
// buildEndpointWhatIf on a fresh database: the samples read, converted, and replayed under
// every policy of the what-if (thaw at the default and the price sweep, the fixed pull and
// lazy keep-alives). Baseline, measured in the same run and the same rounds, alternating:
// one replay of the same requests under the bench contract's `thaw` policy alone, so the
// what-if reads as "N single replays". Also the longest single policy's replay, which is how
// long the worker holds its event loop at most. The load is a seeded synthetic week
// (@thaw/core/testing's syntheticLoadMinutes) on the demo's Llama 3.2 1B endpoint with its
// org's A10G hosts. Medians of --rounds; JSON on stdout, progress on stderr.
import { parseArgs } from "node:util";
import {
  buildEndpointWhatIf,
  estimateSnapshotBytes,
  loadToRequests,
  schedulingDeployment,
  WHAT_IF_ENDPOINT,
  whatIfFleet,
  type WhatIfNodeRow,
} from "@thaw/core";
import { replay, thaw, type EndpointSpec } from "@thaw/core/replay";
import { syntheticLoadMinutes } from "@thaw/core/testing";
import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase } from "@thaw/db/testing";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "7" },
    peak: { type: "string", default: "16" },
    days: { type: "string", default: "7" },
  },
  strict: true,
});
const whole = (name: string, text: string, min: number, max: number) => {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) {
    console.error(`bench:what-if: --${name} must be a whole number from ${min} to ${max}`);
    process.exit(2);
  }
  return n;
};
const rounds = whole("rounds", values.rounds, 1, 100);
const peak = whole("peak", values.peak, 1, 1_000);
const days = whole("days", values.days, 1, 14);
const progress = (message: string) => console.error(`[bench:what-if] ${message}`);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const round3 = (x: number) => Math.round(x * 1000) / 1000;

const database = await createTestDatabase();
try {
  const db = database.db;
  const { orgId } = await seedDemo(db);
  const endpoint = await db.endpoint.findFirstOrThrow({
    where: { orgId, slug: "llama-3-2-1b-gguf" },
  });
  // Two priced g5.xlarge hosts, as the fleet config launches them (1,000 MiB/s gp3 volumes).
  const nodes: WhatIfNodeRow[] = [1, 2].map((i) => ({
    name: `g5-${i}`,
    instanceType: "g5.xlarge",
    gpuModel: "A10G",
    gpuCount: 1,
    vcpus: 4,
    networkGbps: 10,
    registryRttMs: 3,
    pcieGBps: 12,
    hourlyPriceUsd: 1.006,
    diskReadMiBps: 125,
    diskWriteMiBps: 125,
    volumeThroughputMiBps: 1_000,
    measuredDiskReadMiBps: null,
    measuredDiskWriteMiBps: null,
    memoryBytes: 16 * 1024 ** 3,
  }));
  for (const node of nodes)
    await db.node.create({
      data: { ...node, orgId, provider: "sim", runtime: "sim", state: "ready" },
    });
  const now = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  const from = new Date(now.getTime() - days * 86_400_000);
  const samples = syntheticLoadMinutes({ from, days, peak, seed: 1 });
  await db.loadSample.createMany({
    data: samples.map((m) => ({ ...m, orgId, endpointId: endpoint.id })),
  });
  progress(`${samples.length} minutes of load over ${days} day(s), peak ${peak}`);

  // The baseline's inputs: the same requests, endpoint and hosts the what-if replays.
  const load = loadToRequests({
    samples,
    from,
    endpoint: WHAT_IF_ENDPOINT,
    concurrency: endpoint.targetConcurrency,
  });
  const deployment = schedulingDeployment(
    await db.deployment.findUniqueOrThrow({ where: { id: endpoint.activeDeploymentId! } }),
  );
  const fleet = whatIfFleet({
    nodes,
    gpuType: endpoint.gpuType,
    gpusPerReplica: endpoint.gpuCount,
    maxReplicas: endpoint.maxReplicas,
  });
  // As buildEndpointWhatIf makes it (snapshots on, none captured yet).
  const spec: EndpointSpec = {
    gpuType: endpoint.gpuType,
    gpus: endpoint.gpuCount,
    concurrency: load.slotsPerReplica,
    image: { layers: [...deployment.imageLayers], readFraction: deployment.imageReadFraction },
    engine: deployment.engine,
    estargz: deployment.estargzDigest !== null,
    snapshot: { bytes: estimateSnapshotBytes(deployment.engine.weightsBytes, 2), sleepLevel: 2 },
    minReplicas: endpoint.minReplicas,
    maxReplicas: endpoint.maxReplicas,
  };

  const whatIf: number[] = [];
  const baseline: number[] = [];
  const longest: number[] = [];
  let points = 0;
  for (let r = 0; r < rounds; r++) {
    let t = performance.now();
    replay({
      requests: load.requests,
      fleet: { hosts: fleet.hosts, endpoint: () => spec },
      policy: thaw(null),
    });
    baseline.push((performance.now() - t) / 1000);

    let slowest = 0;
    let last = performance.now();
    t = last;
    const report = await buildEndpointWhatIf({
      actor: { type: "system", orgId },
      endpoint: endpoint.id,
      db,
      now,
      snapshotsEnabled: true,
      between: () => {
        const at = performance.now();
        slowest = Math.max(slowest, at - last);
        last = at;
        return Promise.resolve();
      },
    });
    whatIf.push((performance.now() - t) / 1000);
    longest.push(slowest / 1000);
    points = report.points.length;
    progress(
      `round ${r + 1}: what-if ${whatIf.at(-1)!.toFixed(2)} s (${points} policies), one thaw replay ${baseline.at(-1)!.toFixed(3)} s`,
    );
  }
  const whatIfMedian = median(whatIf);
  const baselineMedian = median(baseline);
  console.log(
    JSON.stringify(
      {
        load: {
          days,
          minutes: samples.length,
          peakConcurrency: peak,
          replayedRequests: load.requests.length,
        },
        rounds,
        whatIf: {
          policies: points,
          medianSeconds: round3(whatIfMedian),
          minSeconds: round3(Math.min(...whatIf)),
          maxSeconds: round3(Math.max(...whatIf)),
          longestPolicyMedianSeconds: round3(median(longest)),
        },
        baseline: { what: "one replay, thaw default", medianSeconds: round3(baselineMedian) },
        whatIfOverBaseline: round3(whatIfMedian / baselineMedian),
        target: { seconds: 2, met: whatIfMedian < 2 },
      },
      null,
      2,
    ),
  );
} finally {
  await database.drop();
}
