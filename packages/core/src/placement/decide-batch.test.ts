import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { HOST_PROFILES, scenarioHostFromProfile } from "../cold-start-model/index.ts";
import {
  chooseStartOption,
  DEFAULT_EXPLORATION,
  enumerateStartOptions,
  physicsPriorSeconds,
  predictTimeToReady,
  recentDecisionsWorthCounting,
  type HistoryCell,
  type HistoryForOption,
  type InfeasibleOption,
  type Locality,
  type SchedulingNode,
  type SchedulingSnapshot,
} from "../scheduling/index.ts";
import { deployment, L40S, makeNode, makeSnapshot } from "../scheduling/test-fixtures.ts";
import { StartPath } from "../vocabulary/index.ts";
import {
  decideBatch,
  FAILED_EARLIER,
  occupy,
  type BatchDecision,
  type DecideBatchInput,
} from "./decide-batch.ts";
import { optionsRecord } from "./options-record.ts";

/**
 * The straightforward batch: every replica enumerates, predicts and chooses from scratch
 * against the nodes as the earlier decisions left them. decideBatch must match it exactly.
 */
function referenceBatch(input: DecideBatchInput): BatchDecision[] {
  const { endpoint, deployment, nodes, snapshots, history, random } = input;
  let decisions = input.recentDecisions;
  let explorations = input.recentExplorations;
  const out: BatchDecision[] = [];
  for (const replica of input.replicas) {
    const enumerated = enumerateStartOptions({ endpoint, deployment, nodes, snapshots });
    const infeasible: InfeasibleOption[] = [...enumerated.infeasible];
    const feasible = enumerated.feasible.filter((o) => {
      if (!replica.failed.has(`${o.nodeId}|${o.path}`)) return true;
      infeasible.push({ ...o, reason: FAILED_EARLIER });
      return false;
    });
    const predicted = feasible.map((option) => {
      const snapshot = snapshots.find((s) => s.id === option.snapshotId);
      const host = nodes.find((n) => n.id === option.nodeId)!.host;
      const priorSeconds = physicsPriorSeconds({
        host,
        deployment,
        path: option.path,
        locality: option.locality,
        ...(snapshot ? { snapshot } : {}),
      });
      const prediction = predictTimeToReady({
        priorSeconds,
        history: history(option.path, option.locality),
      });
      return { option, prediction };
    });
    const choice = chooseStartOption({
      options: predicted,
      infeasible,
      objective: endpoint.objective,
      scaleFromZeroWithWaitingRequests: replica.trigger === "scale_from_zero",
      exploration: {
        ...DEFAULT_EXPLORATION,
        recentDecisions: decisions,
        recentExplorations: explorations,
      },
      random,
    });
    out.push({
      replicaId: replica.replicaId,
      attempt: replica.attempt,
      trigger: replica.trigger,
      choice,
    });
    if (!choice.chosen) continue;
    decisions++;
    if (choice.explored) explorations++;
    occupy(
      nodes.find((n) => n.id === choice.chosen!.option.nodeId)!,
      choice.chosen.option,
      endpoint.gpuCount,
    );
  }
  return out;
}

/** Seeded uniform [0, 1) (mulberry32) that counts its draws. */
function seeded(seed: number) {
  let a = seed >>> 0;
  const rng = () => {
    rng.calls++;
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  rng.calls = 0;
  return rng;
}

const hosts = [
  scenarioHostFromProfile(HOST_PROFILES["g6e.xlarge"]),
  scenarioHostFromProfile(HOST_PROFILES["g5.xlarge"]),
];
const snapshotIds = ["snap-a", "snap-b"];

const cellArb: fc.Arbitrary<HistoryCell | undefined> = fc.option(
  fc.record({
    samples: fc.integer({ min: 0, max: 8 }),
    meanLog: fc.double({ min: 1, max: 5, noNaN: true }),
    m2Log: fc.double({ min: 0, max: 2, noNaN: true }),
    predictionErrorLog: fc.constant(0),
  }),
  { nil: undefined },
);

const nodeArb = (i: number) =>
  fc
    .record({
      state: fc.constantFrom("ready", "ready", "ready", "draining"),
      gpuModel: fc.constantFrom(L40S, L40S, L40S, "NVIDIA A10G"),
      gpuCount: fc.constantFrom(2, 4),
      freeGpus: fc.integer({ min: 0, max: 4 }),
      host: fc.integer({ min: 0, max: hosts.length - 1 }),
      estargzSupported: fc.boolean(),
      cached: fc.subarray([deployment.imageDigest, deployment.estargzDigest!]),
      localSnapshots: fc.subarray(snapshotIds),
      warm: fc.array(fc.constantFrom(deployment.id, "other-deployment"), { maxLength: 3 }),
      startsInFlight: fc.integer({ min: 0, max: 3 }),
      // Node ids share costs often: ties must break the same way.
      id: fc.constantFrom(`node-${i}`, `Node-${i}`, `n${i}`),
    })
    .map((n): SchedulingNode =>
      makeNode({
        id: n.id,
        name: n.id,
        state: n.state as SchedulingNode["state"],
        gpuModel: n.gpuModel,
        gpuCount: n.gpuCount,
        freeGpus: Math.min(n.freeGpus, n.gpuCount),
        host: hosts[n.host]!,
        estargzSupported: n.estargzSupported,
        cachedImageDigests: n.cached,
        localSnapshotIds: n.localSnapshots,
        idleWarmReplicas: n.warm.map((deploymentId, w) => ({
          replicaId: `warm-${i}-${w}`,
          deploymentId,
        })),
        startsInFlight: n.startsInFlight,
      }),
    );

const batchArb = fc.integer({ min: 0, max: 14 }).chain((nodeCount) =>
  fc.record({
    nodes: fc.tuple(...Array.from({ length: nodeCount }, (_, i) => nodeArb(i))),
    snapshots: fc.subarray([
      makeSnapshot({ id: "snap-a" }),
      makeSnapshot({ id: "snap-b", inStore: false, sleepLevel: 1 }),
      makeSnapshot({ id: "snap-c", status: "quarantined" }),
      makeSnapshot({ id: "snap-d", driverVersion: "535.0" }),
    ] as SchedulingSnapshot[]),
    gpuCount: fc.constantFrom(1, 1, 2),
    objective: fc.constantFrom("mean" as const, "p90" as const),
    allowedPaths: fc.subarray([...StartPath.options], { minLength: 1 }),
    estargz: fc.boolean(),
    cells: fc.dictionary(
      fc.constantFrom(
        ...["deployment", "endpoint", "fleet"].flatMap((scope) =>
          StartPath.options.flatMap((path) =>
            ["warm-replica", "snapshot-local", "snapshot-store", "image-cached", "cold"].map(
              (locality) => `${scope}|${path}|${locality}`,
            ),
          ),
        ),
      ),
      cellArb,
    ),
    replicas: fc.array(
      fc.record({
        trigger: fc.constantFrom(
          "scale_up" as const,
          "scale_from_zero" as const,
          "prewarm" as const,
          "replacement" as const,
        ),
        failed: fc.array(
          fc.tuple(
            fc.integer({ min: 0, max: Math.max(0, nodeCount - 1) }),
            fc.constantFrom(...StartPath.options),
          ),
          { maxLength: 3 },
        ),
      }),
      { minLength: 1, maxLength: 32 },
    ),
    recentDecisions: fc.integer({ min: 0, max: 200 }),
    recentExplorations: fc.integer({ min: 0, max: 5 }),
    seed: fc.integer(),
  }),
);

type Batch = typeof batchArb extends fc.Arbitrary<infer T> ? T : never;

function inputOf(batch: Batch, random: () => number): DecideBatchInput {
  const nodes = batch.nodes.map((n) => ({ ...n, host: n.host }));
  return {
    endpoint: {
      id: "endpoint-1",
      gpuType: L40S,
      gpuCount: batch.gpuCount,
      allowedPaths: batch.allowedPaths,
      objective: batch.objective,
    },
    deployment: { ...deployment, estargzDigest: batch.estargz ? deployment.estargzDigest : null },
    nodes,
    snapshots: batch.snapshots,
    history: (path: StartPath, locality: Locality) => {
      const history: HistoryForOption = {};
      for (const scope of ["deployment", "endpoint", "fleet"] as const) {
        const cell = batch.cells[`${scope}|${path}|${locality}`];
        if (cell) history[scope] = cell;
      }
      return history;
    },
    replicas: batch.replicas.map((r, i) => ({
      replicaId: `replica-${i}`,
      attempt: r.failed.length + 1,
      trigger: r.trigger,
      failed: new Set(r.failed.map(([n, path]) => `${nodes[n]?.id ?? "none"}|${path}`)),
    })),
    recentDecisions: batch.recentDecisions,
    recentExplorations: batch.recentExplorations,
    random,
  };
}

describe("decideBatch", () => {
  it("decides exactly as the replica-by-replica reference, drawing the same random numbers", () => {
    let explored = 0;
    let placed = 0;
    let unplaced = 0;
    fc.assert(
      fc.property(batchArb, (batch) => {
        const referenceRandom = seeded(batch.seed);
        const reference = inputOf(batch, referenceRandom);
        const expected = referenceBatch(reference);
        const optimisedRandom = seeded(batch.seed);
        const optimised = inputOf(batch, optimisedRandom);
        const actual = decideBatch(optimised);

        expect(actual).toEqual(expected);
        expect(actual.map((d) => JSON.stringify(optionsRecord(d.choice)))).toEqual(
          expected.map((d) => JSON.stringify(optionsRecord(d.choice))),
        );
        expect(actual.map((d) => d.choice.explanation)).toEqual(
          expected.map((d) => d.choice.explanation),
        );
        expect(optimised.nodes).toEqual(reference.nodes);
        expect(optimisedRandom.calls).toBe(referenceRandom.calls);
        for (const d of actual) {
          if (d.choice.explored) explored++;
          if (d.choice.chosen) placed++;
          else unplaced++;
        }
      }),
      { numRuns: 150 },
    );
    // The generator reaches the interesting cases: explorations, placements and full fleets.
    expect(explored).toBeGreaterThan(0);
    expect(placed).toBeGreaterThan(0);
    expect(unplaced).toBeGreaterThan(0);
  });

  it("decides the same when recent decisions are counted only up to recentDecisionsWorthCounting", () => {
    let explored = 0;
    let budgetSpent = 0;
    fc.assert(
      fc.property(
        batchArb,
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 0, max: 100_000 }),
        (batch, recentExplorations, beyond) => {
          const cap = recentDecisionsWorthCounting(recentExplorations, batch.replicas.length);
          const counted = { ...batch, recentExplorations, recentDecisions: cap };
          const all = { ...batch, recentExplorations, recentDecisions: cap + beyond };
          const capped = decideBatch(inputOf(counted, seeded(batch.seed)));
          expect(capped).toEqual(decideBatch(inputOf(all, seeded(batch.seed))));
          for (const d of capped) if (d.choice.explored) explored++;
          // Below the cap the budget does bind (so the cap is not vacuous).
          const below = decideBatch(
            inputOf({ ...batch, recentExplorations, recentDecisions: 0 }, seeded(batch.seed)),
          );
          if (below.some((d) => d.choice.explanation.includes("budget spent"))) budgetSpent++;
        },
      ),
      { numRuns: 150 },
    );
    expect(explored).toBeGreaterThan(0);
    expect(budgetSpent).toBeGreaterThan(0);
  });
});
