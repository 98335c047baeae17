import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mulberry32 } from "../cold-start-model/seeded-random";
import { chooseStartOption, type PredictedStartOption } from "./choose-start-option";
import { enumerateStartOptions } from "./enumerate-start-options";
import { physicsPriorSeconds, predictTimeToReady } from "./predict-time-to-ready";
import type { StartOption } from "./start-option";
import { deployment, endpoint, L40S, makeNode, makeSnapshot } from "./test-fixtures";
import { EMPTY_HISTORY_CELL, updateHistoryStat } from "./update-history-stat";

const option = (overrides: Partial<StartOption>): StartOption => ({
  nodeId: "node-1",
  nodeName: "node-1",
  path: "pull",
  locality: "cold",
  gpusToReserve: 1,
  startsInFlight: 0,
  ...overrides,
});

const withSamples = (seconds: number, samples: number) =>
  Array.from({ length: samples }, (_, i) => seconds * (1 + 0.05 * Math.sin(i))).reduce(
    (cell, s) => updateHistoryStat(cell, s),
    EMPTY_HISTORY_CELL,
  );

const predicted = (o: StartOption, priorSeconds: number, samples = 0): PredictedStartOption => ({
  option: o,
  prediction: predictTimeToReady({
    priorSeconds,
    history: samples > 0 ? { deployment: withSamples(priorSeconds, samples) } : {},
  }),
});

const noBudget = {
  minSamples: 5,
  budgetFraction: 0.1,
  recentDecisions: 100,
  recentExplorations: 0,
};

describe("chooseStartOption", () => {
  it("picks the fastest option and explains the runners-up", () => {
    const choice = chooseStartOption({
      options: [
        predicted(option({ path: "lazy", nodeId: "n1", nodeName: "node-1" }), 41, 20),
        predicted(
          option({ path: "restore", nodeId: "n3", nodeName: "node-3", locality: "snapshot-local" }),
          5.8,
          12,
        ),
      ],
      objective: "mean",
      scaleFromZeroWithWaitingRequests: false,
      exploration: noBudget,
      random: mulberry32(1),
    });
    expect(choice.chosen?.option.path).toBe("restore");
    expect(choice.explored).toBe(false);
    expect(choice.explanation).toMatch(
      /^restore on node-3: 5\.\d s predicted \(12 samples\); vs lazy on node-1: 4\d s \(20 samples\)/,
    );
    expect(choice.options[1]?.lostBecause).toMatchObject({ kind: "slower" });
  });

  it("trades holding the bytes against starts already in flight on that node", () => {
    const busyCached = predicted(
      option({ nodeId: "busy", nodeName: "busy", locality: "image-cached", startsInFlight: 4 }),
      30,
      20,
    );
    const idleCold = predicted(option({ nodeId: "idle", nodeName: "idle" }), 60, 20);
    const choice = chooseStartOption({
      options: [busyCached, idleCold],
      objective: "mean",
      scaleFromZeroWithWaitingRequests: false,
      exploration: noBudget,
      random: mulberry32(1),
    });
    expect(choice.chosen?.option.nodeId).toBe("idle");
  });

  it("uses p90 when the endpoint's objective says so", () => {
    // Same median, but the unmeasured option is far less certain: its p90 is worse.
    const options = [
      predicted(option({ nodeId: "certain", nodeName: "certain" }), 20, 50),
      predicted(option({ nodeId: "vague", nodeName: "vague" }), 19, 0),
    ];
    const args = {
      options,
      scaleFromZeroWithWaitingRequests: true,
      exploration: noBudget,
      random: mulberry32(1),
    };
    expect(chooseStartOption({ ...args, objective: "p90" }).chosen?.option.nodeId).toBe("certain");
  });

  it("explores an under-sampled option within budget, and records the infeasible ones", () => {
    const options = [
      predicted(option({ nodeId: "known", nodeName: "known", path: "pull" }), 30, 50),
      predicted(option({ nodeId: "new", nodeName: "new", path: "lazy" }), 31, 0),
    ];
    const explored = Array.from({ length: 50 }, (_, seed) =>
      chooseStartOption({
        options,
        infeasible: [
          { nodeId: "x", nodeName: "x", path: "restore", reason: "no snapshot of this deployment" },
        ],
        objective: "mean",
        scaleFromZeroWithWaitingRequests: false,
        exploration: { ...noBudget, recentExplorations: 0, recentDecisions: 100 },
        random: mulberry32(seed),
      }),
    );
    const exploring = explored.find((c) => c.explored);
    expect(exploring?.chosen?.option.nodeId).toBe("new");
    expect(exploring?.options.find((o) => o.option.nodeId === "known")?.lostBecause?.kind).toBe(
      "exploration-chosen",
    );
    expect(exploring?.infeasible[0]?.lostBecause.text).toBe(
      "infeasible: no snapshot of this deployment",
    );
    // With the budget spent, the same draws never explore and say so.
    const spent = Array.from({ length: 50 }, (_, seed) =>
      chooseStartOption({
        options,
        objective: "mean",
        scaleFromZeroWithWaitingRequests: false,
        exploration: { ...noBudget, recentExplorations: 10, recentDecisions: 100 },
        random: mulberry32(seed),
      }),
    );
    expect(spent.every((c) => !c.explored)).toBe(true);
    expect(spent.some((c) => c.options.some((o) => o.lostBecause?.kind === "not-explored"))).toBe(
      true,
    );
  });

  it("returns no choice when nothing is feasible", () => {
    const choice = chooseStartOption({
      options: [],
      objective: "mean",
      scaleFromZeroWithWaitingRequests: true,
      exploration: noBudget,
      random: mulberry32(1),
    });
    expect(choice.chosen).toBeNull();
    expect(choice.explanation).toMatch(/no feasible option/);
  });
});

describe("chooseStartOption properties (enumerate → predict → choose)", () => {
  const nodeArb = fc.record({
    state: fc.constantFrom("ready", "ready", "draining"),
    gpuModel: fc.constantFrom(L40S, L40S, "NVIDIA A10G"),
    gpuCount: fc.integer({ min: 1, max: 8 }),
    free: fc.integer({ min: 0, max: 8 }),
    driverVersion: fc.constantFrom("550.54", "535.00"),
    warm: fc.boolean(),
    localSnapshot: fc.boolean(),
    imageCached: fc.boolean(),
    startsInFlight: fc.integer({ min: 0, max: 5 }),
    samples: fc.integer({ min: 0, max: 20 }),
  });
  const scenarioArb = fc.record({
    nodes: fc.array(nodeArb, { minLength: 1, maxLength: 5 }),
    snapshotStatus: fc.constantFrom("ready", "quarantined"),
    gpusNeeded: fc.integer({ min: 1, max: 4 }),
    scaleFromZero: fc.boolean(),
    recentExplorations: fc.integer({ min: 0, max: 20 }),
    seed: fc.integer(),
    objective: fc.constantFrom("mean", "p90"),
  });

  function decide(s: Scenario) {
    const nodes = s.nodes.map((n, i) =>
      makeNode({
        id: `node-${i}`,
        name: `node-${i}`,
        state: n.state,
        gpuModel: n.gpuModel,
        gpuCount: n.gpuCount,
        freeGpus: Math.min(n.free, n.gpuCount),
        driverVersion: n.driverVersion,
        idleWarmReplicas: n.warm ? [{ replicaId: `r-${i}`, deploymentId: deployment.id }] : [],
        localSnapshotIds: n.localSnapshot ? ["snapshot-1"] : [],
        cachedImageDigests: n.imageCached ? [deployment.imageDigest] : [],
        startsInFlight: n.startsInFlight,
      }),
    );
    const snapshots = [makeSnapshot({ status: s.snapshotStatus })];
    const e = { ...endpoint, gpuCount: s.gpusNeeded };
    const { feasible, infeasible } = enumerateStartOptions({
      endpoint: e,
      deployment,
      nodes,
      snapshots,
    });
    const options = feasible.map((o) => {
      const node = nodes.find((n) => n.id === o.nodeId)!;
      const samples = s.nodes[Number(o.nodeId.slice(5))]!.samples;
      const prior = physicsPriorSeconds({
        host: node.host,
        deployment,
        path: o.path,
        locality: o.locality,
        snapshot: snapshots[0],
      });
      return predicted(o, prior, samples);
    });
    const choice = chooseStartOption({
      options,
      infeasible,
      objective: s.objective,
      scaleFromZeroWithWaitingRequests: s.scaleFromZero,
      exploration: {
        minSamples: 5,
        budgetFraction: 0.2,
        recentDecisions: 50,
        recentExplorations: s.recentExplorations,
      },
      random: mulberry32(s.seed),
    });
    return { nodes, feasible, choice };
  }

  type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;

  it("never chooses an infeasible option nor more GPUs than the node has free", () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const { nodes, feasible, choice } = decide(s);
        if (feasible.length === 0) {
          expect(choice.chosen).toBeNull();
          return;
        }
        const chosen = choice.chosen!.option;
        expect(feasible).toContainEqual(chosen);
        const node = nodes.find((n) => n.id === chosen.nodeId)!;
        expect(node.state).toBe("ready");
        expect(chosen.gpusToReserve).toBeLessThanOrEqual(node.freeGpus);
        expect(chosen.gpusToReserve).toBeLessThanOrEqual(node.gpuCount);
        expect(choice.options.filter((o) => o.chosen)).toHaveLength(1);
        expect(choice.options.filter((o) => !o.chosen).every((o) => o.lostBecause !== null)).toBe(
          true,
        );
        // Each "slower" text states its own option's margin over the chosen one (texts are
        // shared between options of equal cost).
        for (const o of choice.options) {
          if (o.lostBecause?.kind !== "slower") continue;
          const by = Math.max(0, o.costSeconds - choice.chosen!.costSeconds);
          expect(o.lostBecause.bySeconds).toBe(by);
          expect(o.lostBecause.text).toBe(`slower by ${by < 10 ? by.toFixed(1) : by.toFixed(0)} s`);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("a healthy warm replica always wins when one exists", () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const { feasible, choice } = decide(s);
        if (feasible.some((o) => o.path === "warm")) {
          expect(choice.chosen?.option.path).toBe("warm");
          expect(choice.explored).toBe(false);
        }
      }),
      { numRuns: 150 },
    );
  });

  it("never restores a quarantined or incompatible snapshot", () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const { nodes, choice } = decide(s);
        const chosen = choice.chosen?.option;
        if (chosen?.path !== "restore") return;
        expect(s.snapshotStatus).toBe("ready");
        expect(nodes.find((n) => n.id === chosen.nodeId)?.driverVersion).toBe("550.54");
      }),
      { numRuns: 150 },
    );
  });

  it("never explores on a scale-from-zero with requests waiting", () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const { choice } = decide({ ...s, scaleFromZero: true });
        expect(choice.explored).toBe(false);
        if (choice.chosen) {
          const best = Math.min(...choice.options.map((o) => o.costSeconds));
          if (choice.chosen.option.path !== "warm") expect(choice.chosen.costSeconds).toBe(best);
        }
      }),
      { numRuns: 150 },
    );
  });
});
