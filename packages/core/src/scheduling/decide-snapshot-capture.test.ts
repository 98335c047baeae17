import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  bindingKey,
  decideSnapshotCapture,
  DEFAULT_SNAPSHOT_CAPTURE_SETTINGS,
  estimateSnapshotBytes,
  type ExistingSnapshot,
  type SnapshotCaptureInput,
  type SnapshotCaptureSource,
} from "./decide-snapshot-capture";
import type { HistoryForOption } from "./predict-time-to-ready";
import { deployment, endpoint, L40S, makeNode } from "./test-fixtures";
import { updateHistoryStat, EMPTY_HISTORY_CELL } from "./update-history-stat";

// The fixture deployment (22 GB image, 16 GB of weights, 58 s of engine init, compile and
// warmup) on an L40S host with local NVMe: a cached-image start still pays the engine's
// minute, a sleep-level-2 restore reads 3.4 GB and reloads the weights at disk speed.

const GB = 1e9;
const now = new Date("2026-11-23T12:00:00Z");
const noHistory = (): HistoryForOption => ({});

const nvme = { ...makeNode().host, diskReadMiBps: 3_000, diskWriteMiBps: 1_500 };
const source = (overrides: Partial<SnapshotCaptureSource["node"]> = {}, replicaId = "r-1") => ({
  replicaId,
  node: makeNode({ host: nvme, ...overrides }),
});

const snapshot = (overrides: Partial<ExistingSnapshot> = {}): ExistingSnapshot => ({
  id: "s-1",
  gpuModel: L40S,
  driverVersion: "550.54",
  cudaVersion: "12.4",
  status: "ready",
  captureFailed: false,
  changedAt: now,
  ...overrides,
});

const STORE = "snapshots.thaw.example.com/thaw-snapshots";

const input = (overrides: Partial<SnapshotCaptureInput> = {}): SnapshotCaptureInput => ({
  snapshotStore: STORE,
  endpoint,
  deployment,
  sources: [source()],
  snapshots: [],
  history: noHistory,
  coldStartsInWindow: 2,
  storage: { usedBytes: 0, budgetBytes: 500 * GB },
  now,
  ...overrides,
});

describe("decideSnapshotCapture", () => {
  it("declines without an operator-owned snapshot store, however much a capture would pay", () => {
    expect(decideSnapshotCapture(input()).capture).toBe(true);
    for (const snapshotStore of [null, ""]) {
      const decision = decideSnapshotCapture(input({ snapshotStore }));
      expect(decision).toEqual({
        capture: false,
        reason:
          "no snapshot store is configured (THAW_SNAPSHOT_REGISTRY): checkpoints go only to a store the operator owns",
      });
    }
  });

  it("captures when restore beats the current path by far over the expected starts", () => {
    const decision = decideSnapshotCapture(input());
    expect(decision.capture).toBe(true);
    if (!decision.capture) return;
    expect(decision.source).toEqual({ replicaId: "r-1", nodeId: "node-1", nodeName: "node-1" });
    expect(decision.binding).toEqual({
      gpuModel: L40S,
      driverVersion: "550.54",
      cudaVersion: "12.4",
    });
    expect(decision.figures.restoreSeconds).toBeLessThan(0.75 * decision.figures.currentSeconds);
    expect(decision.figures.expectedStarts).toBe(48);
    expect(decision.reason).toMatch(/restore .* vs (pull|lazy) .* on node-1/);
  });

  it("never captures when the endpoint does not allow restore", () => {
    const decision = decideSnapshotCapture(
      input({ endpoint: { allowedPaths: ["warm", "lazy", "pull"] } }),
    );
    expect(decision).toEqual({ capture: false, reason: "restore is not allowed by the endpoint" });
  });

  it("never captures a second snapshot of the same deployment, GPU, driver and CUDA", () => {
    for (const status of ["ready", "capturing"] as const) {
      const decision = decideSnapshotCapture(input({ snapshots: [snapshot({ status })] }));
      expect(decision.capture).toBe(false);
      expect(decision.reason).toMatch(/already exists/);
    }
  });

  it("does not capture a tensor-parallel deployment where that degree keeps failing to restore", () => {
    const failedAt = (deploymentId: string, driverVersion = "550.54") => ({
      deploymentId,
      gpuModel: L40S,
      driverVersion,
    });
    const tp = (degree: number, quarantinedElsewhere: ReturnType<typeof failedAt>[]) =>
      decideSnapshotCapture(input({ tensorParallel: { degree, quarantinedElsewhere } }));
    const twoOthers = [failedAt("d-a"), failedAt("d-a"), failedAt("d-b")];
    const refused = tp(2, twoOthers);
    expect(refused.capture).toBe(false);
    expect(refused.reason).toMatch(
      /tensor-parallel 2 on (NVIDIA )?L40S driver 550\.54 were quarantined for 2 other deployments/,
    );
    // One other deployment is not a pattern; the same failures on another driver say nothing
    // of this one; a single-GPU deployment is never held to a multi-GPU limit.
    expect(tp(2, [failedAt("d-a"), failedAt("d-a")]).capture).toBe(true);
    expect(tp(2, [failedAt("d-a", "570.1"), failedAt("d-b", "570.1")]).capture).toBe(true);
    expect(tp(1, twoOthers).capture).toBe(true);
    // A second source on another driver is still captured.
    const elsewhere = decideSnapshotCapture(
      input({
        sources: [source(), source({ id: "n-2", name: "n-2", driverVersion: "570.1" }, "r-2")],
        tensorParallel: { degree: 2, quarantinedElsewhere: twoOthers },
      }),
    );
    expect(elsewhere.capture && elsewhere.binding.driverVersion).toBe("570.1");
  });

  it("captures for another driver even when one binding already has a snapshot", () => {
    const decision = decideSnapshotCapture(
      input({
        sources: [
          source({ id: "a", name: "a" }, "r-a"),
          source({ id: "b", name: "b", driverVersion: "570.1" }, "r-b"),
        ],
        snapshots: [snapshot()],
      }),
    );
    expect(decision.capture && decision.source.replicaId).toBe("r-b");
  });

  it("a quarantined or deleted snapshot does not count as existing", () => {
    const decision = decideSnapshotCapture(
      input({
        snapshots: [snapshot({ status: "deleted", changedAt: new Date(0) })],
      }),
    );
    expect(decision.capture).toBe(true);
  });

  it("needs a ready replica on a node whose driver and CUDA are known", () => {
    expect(decideSnapshotCapture(input({ sources: [] })).reason).toBe(
      "no ready replica to capture",
    );
    for (const node of [
      { driverVersion: null },
      { cudaVersion: null },
      { state: "lost" as const },
    ]) {
      const decision = decideSnapshotCapture(input({ sources: [source(node)] }));
      expect(decision.capture).toBe(false);
      expect(decision.reason).toMatch(/known driver and CUDA/);
    }
  });

  it("stays within the org's storage budget", () => {
    const bytes = estimateSnapshotBytes(deployment.engine.weightsBytes, 2);
    const fits = decideSnapshotCapture(
      input({ storage: { usedBytes: 10 * GB, budgetBytes: 10 * GB + bytes } }),
    );
    expect(fits.capture).toBe(true);
    const over = decideSnapshotCapture(
      input({ storage: { usedBytes: 10 * GB, budgetBytes: 10 * GB + bytes - 1 } }),
    );
    expect(over.capture).toBe(false);
    expect(over.reason).toMatch(/storage budget/);
  });

  it("does not capture when restore is not faster than what the deployment measured", () => {
    // The deployment's cached pulls took 6 s: a restore (3.4 GB of process image, then
    // 16 GB of weights from the NVMe, staged or not: over 6 s) saves nothing.
    let cell = EMPTY_HISTORY_CELL;
    for (let i = 0; i < 30; i++) cell = updateHistoryStat(cell, 6);
    const decision = decideSnapshotCapture(
      input({
        history: (path, locality) =>
          path === "pull" && locality === "image-cached" ? { deployment: cell } : {},
      }),
    );
    expect(decision.capture).toBe(false);
    expect(decision.reason).toMatch(/not be faster by enough/);
    expect(decision.capture === false && decision.figures?.currentPath).toBe("pull");
  });

  it("does not capture for an endpoint that rarely starts: the capture costs more than it saves", () => {
    const decision = decideSnapshotCapture(
      input({ coldStartsInWindow: 0, settings: { ...DEFAULT_SNAPSHOT_CAPTURE_SETTINGS } }),
    );
    expect(decision.capture).toBe(false);
    expect(decision.reason).toMatch(/not worth it yet: .* × 0\.0 expected starts/);
  });

  it("backs off a deployment whose snapshots keep getting quarantined, then gives up", () => {
    const hourAgo = new Date(now.getTime() - 3_600_000 - 1);
    const once = decideSnapshotCapture(
      input({
        snapshots: [
          snapshot({ status: "quarantined", changedAt: new Date(now.getTime() - 60_000) }),
        ],
      }),
    );
    expect(once.capture).toBe(false);
    expect(once.reason).toMatch(/backing off after 1/);
    // One failure: 1 h, then capture again.
    expect(
      decideSnapshotCapture(
        input({ snapshots: [snapshot({ status: "quarantined", changedAt: hourAgo })] }),
      ).capture,
    ).toBe(true);
    // Two: 2 h.
    const twice = decideSnapshotCapture(
      input({
        snapshots: [
          snapshot({ id: "a", status: "quarantined", changedAt: hourAgo }),
          snapshot({ id: "b", status: "deleted", captureFailed: true, changedAt: hourAgo }),
        ],
      }),
    );
    expect(twice.reason).toMatch(/backing off after 2/);
    const thrice = decideSnapshotCapture(
      input({
        snapshots: ["a", "b", "c"].map((id) =>
          snapshot({ id, status: "quarantined", changedAt: new Date(0) }),
        ),
      }),
    );
    expect(thrice.reason).toMatch(/3 snapshots .* not capturing it again/);
  });

  it("prefers the source where restore saves most, ties broken by node id", () => {
    const decision = decideSnapshotCapture(
      input({
        sources: [
          source({ id: "b", name: "b", host: { ...nvme, diskReadMiBps: 1_000 } }, "r-b"),
          source({ id: "a", name: "a" }, "r-a"),
          source({ id: "c", name: "c" }, "r-c"),
        ],
      }),
    );
    expect(decision.capture && decision.source.replicaId).toBe("r-a");
  });
});

describe("decideSnapshotCapture properties", () => {
  const binding = fc.record({
    gpuModel: fc.constantFrom(L40S, "A10G"),
    driverVersion: fc.constantFrom("550.54", "570.1"),
    cudaVersion: fc.constantFrom("12.4", "12.8"),
  });
  const arbitraryInput = fc.record({
    // Weighted towards inputs where a capture is possible, so that the properties are tested.
    allowedPaths: fc.oneof(
      { weight: 2, arbitrary: fc.constant(["warm", "restore", "lazy", "pull"] as const) },
      { weight: 1, arbitrary: fc.subarray(["warm", "restore", "lazy", "pull"] as const) },
    ),
    sources: fc.array(
      fc.record({
        binding,
        nodeState: fc.constantFrom<"ready" | "lost" | "draining">("ready", "lost", "draining"),
        known: fc.oneof(
          { weight: 4, arbitrary: fc.constant(true) },
          { weight: 1, arbitrary: fc.constant(false) },
        ),
      }),
      { minLength: 1, maxLength: 4 },
    ),
    snapshots: fc.array(
      fc.record({
        binding,
        status: fc.constantFrom<"capturing" | "ready" | "quarantined" | "deleted">(
          "capturing",
          "ready",
          "quarantined",
          "deleted",
        ),
        captureFailed: fc.boolean(),
        ageSeconds: fc.integer({ min: 0, max: 30 * 24 * 3600 }),
      }),
      { maxLength: 3 },
    ),
    store: fc.oneof(
      { weight: 4, arbitrary: fc.constant(STORE) },
      { weight: 1, arbitrary: fc.constant(null) },
    ),
    coldStartsInWindow: fc.integer({ min: 0, max: 50 }),
    usedGb: fc.integer({ min: 0, max: 100 }),
    budgetGb: fc.integer({ min: 0, max: 100 }),
  });
  const build = (
    a: typeof arbitraryInput extends fc.Arbitrary<infer T> ? T : never,
  ): SnapshotCaptureInput =>
    input({
      snapshotStore: a.store,
      endpoint: { allowedPaths: a.allowedPaths },
      sources: a.sources.map((s, i) =>
        source(
          {
            id: `n-${i}`,
            name: `n-${i}`,
            state: s.nodeState,
            gpuModel: s.binding.gpuModel,
            driverVersion: s.known ? s.binding.driverVersion : null,
            cudaVersion: s.binding.cudaVersion,
          },
          `r-${i}`,
        ),
      ),
      snapshots: a.snapshots.map((s, i) =>
        snapshot({
          id: `s-${i}`,
          ...s.binding,
          status: s.status,
          captureFailed: s.captureFailed,
          changedAt: new Date(now.getTime() - s.ageSeconds * 1000),
        }),
      ),
      coldStartsInWindow: a.coldStartsInWindow,
      storage: { usedBytes: a.usedGb * GB, budgetBytes: a.budgetGb * GB },
    });

  it("never a duplicate, never over budget, never without restore or a store, always a reason", () => {
    let captures = 0;
    fc.assert(
      fc.property(arbitraryInput, (a) => {
        const given = build(a);
        const decision = decideSnapshotCapture(given);
        expect(decision.reason.length).toBeGreaterThan(0);
        if (!decision.capture) return;
        captures++;
        expect(given.snapshotStore).toBe(STORE);
        expect(given.endpoint.allowedPaths).toContain("restore");
        const live = given.snapshots.filter(
          (s) => s.status === "ready" || s.status === "capturing",
        );
        expect(live.map(bindingKey)).not.toContain(bindingKey(decision.binding));
        expect(given.storage.usedBytes + decision.figures.estimatedBytes).toBeLessThanOrEqual(
          given.storage.budgetBytes,
        );
        const chosen = given.sources.find((s) => s.replicaId === decision.source.replicaId)!;
        expect(chosen.node.state).toBe("ready");
        expect(chosen.node.driverVersion).not.toBeNull();
        expect(decision.figures.restoreSeconds).toBeLessThan(decision.figures.currentSeconds);
      }),
      // About one input in eight leads to a capture (112–133 of 1,000 in four runs): at 300 runs
      // a random seed fell below 30 captures in CI (27); at 1,000 the bound is ~8 σ away.
      { numRuns: 1_000 },
    );
    // The properties say something only if the generator reaches captures.
    expect(captures).toBeGreaterThan(30);
  });
});
