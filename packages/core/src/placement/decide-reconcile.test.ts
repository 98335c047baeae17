import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ReplicaState } from "../vocabulary/index.ts";
import {
  CRASH_LOOP_FAILURES,
  decideReconcile,
  reconcileChangesNothing,
  type ReconcileDecision,
  type ReconcileInput,
  type ReconcileReplica,
} from "./decide-reconcile.ts";

// Reconcile's decision alone. Its writes, and the lock, are reconcile-endpoint's (its
// integration test); here: which decisions change nothing (the sweep skips the lock for
// those), and that a decision carried out leaves nothing for the next one to change.

const NOW = new Date("2026-11-29T12:00:00Z");
const CURRENT = "deployment-current";

function replica(overrides: Partial<ReconcileReplica> & { id: string }): ReconcileReplica {
  return {
    state: "ready",
    deploymentId: CURRENT,
    nodeId: "node-1",
    prewarm: false,
    pendingCause: null,
    drainIntent: null,
    createdAt: new Date(NOW.getTime() - 60_000),
    updatedAt: new Date(NOW.getTime() - 60_000),
    nodeState: "ready",
    capturing: false,
    ...overrides,
  };
}

function input(overrides: Partial<ReconcileInput> = {}): ReconcileInput {
  return {
    endpoint: { desiredReplicas: 1, activeDeploymentId: CURRENT, deleted: false },
    replicas: [replica({ id: "r1" })],
    recentFailures: 0,
    undispatched: [],
    now: NOW,
    ...overrides,
  };
}

describe("decideReconcile", () => {
  it("changes nothing for an endpoint serving what it desires", () => {
    const decision = decideReconcile(input());
    expect(reconcileChangesNothing(decision)).toBe(true);
    expect(decision).toMatchObject({ desired: 1, counted: 1, drains: [], shortfall: 0 });
  });

  it("changes nothing for an endpoint at zero (its parked replicas are the warm pool's)", () => {
    const decision = decideReconcile(
      input({
        endpoint: { desiredReplicas: 0, activeDeploymentId: CURRENT, deleted: false },
        replicas: [],
      }),
    );
    expect(reconcileChangesNothing(decision)).toBe(true);
  });

  it("creates a shortfall and notes the need", () => {
    const decision = decideReconcile(
      input({ endpoint: { desiredReplicas: 3, activeDeploymentId: CURRENT, deleted: false } }),
    );
    expect(decision).toMatchObject({ shortfall: 2, capacityNote: "needed", backoff: null });
    expect(reconcileChangesNothing(decision)).toBe(false);
  });

  it("holds a shortfall back in a crash loop, which is still not nothing (the worker warns)", () => {
    const decision = decideReconcile(
      input({
        endpoint: { desiredReplicas: 2, activeDeploymentId: CURRENT, deleted: false },
        recentFailures: CRASH_LOOP_FAILURES,
      }),
    );
    expect(decision.shortfall).toBe(0);
    expect(decision.capacityNote).toBeNull();
    expect(decision.backoff).toMatch(/holding back 1 replacement/);
    expect(reconcileChangesNothing(decision)).toBe(false);
  });

  it("leaves a scaled-down ready replica to the warm pool, and drains a lost node's", () => {
    const decision = decideReconcile(
      input({
        endpoint: { desiredReplicas: 1, activeDeploymentId: CURRENT, deleted: false },
        replicas: [
          replica({ id: "old", createdAt: new Date(NOW.getTime() - 90_000) }),
          replica({ id: "new" }),
          replica({ id: "lost", nodeId: "node-2", nodeState: "lost" }),
        ],
      }),
    );
    expect(decision.drains).toEqual([
      { replicaId: "lost", drainIntent: "node_lost", cancelIntent: "node_lost" },
      { replicaId: "new", drainIntent: "park_candidate", cancelIntent: "scale_down" },
    ]);
    expect(decision.parking).toEqual(["new"]);
    expect(decision.capacityNote).toBe("surplus");
    // The lost node may come back running it: stopped then.
    expect(decision.toStop).toEqual([{ replicaId: "lost", nodeId: "node-2", action: "wait" }]);
  });

  it("hands on what waits for a worker: pending replicas, lost dispatches, overdue drains", () => {
    const pending = decideReconcile(
      input({ replicas: [replica({ id: "p", state: "pending", nodeId: null, nodeState: null })] }),
    );
    expect(pending.pending).toEqual([{ id: "p", deploymentId: CURRENT }]);
    expect(reconcileChangesNothing(pending)).toBe(false);

    const lostDispatch = decideReconcile(
      input({ undispatched: [{ id: "start-1", replicaId: "r1" }] }),
    );
    expect(lostDispatch.toDispatch).toEqual(["start-1"]);
    expect(reconcileChangesNothing(lostDispatch)).toBe(false);

    const draining = (updatedAgoMs: number) =>
      decideReconcile(
        input({
          replicas: [
            replica({ id: "r1" }),
            replica({
              id: "d",
              state: "draining",
              drainIntent: "park_candidate",
              updatedAt: new Date(NOW.getTime() - updatedAgoMs),
            }),
          ],
        }),
      );
    // Within the grace the warm pool parks it; past it, reconcile stops it.
    expect(reconcileChangesNothing(draining(1_000))).toBe(true);
    expect(draining(10 * 60_000).toStop).toEqual([
      { replicaId: "d", nodeId: "node-1", action: "stop-on-node" },
    ]);
  });

  // Level-triggered: whatever the endpoint's state, a decision carried out (its drains marked,
  // its shortfall created) leaves the next decision nothing to drain or create.
  it("leaves nothing to change once carried out (fast-check)", () => {
    const replicaArb = (id: string, at: number) =>
      fc
        .record({
          state: fc.constantFrom<ReplicaState>(
            "pending",
            "placed",
            "starting",
            "ready",
            "draining",
          ),
          deploymentId: fc.constantFrom(CURRENT, "deployment-old"),
          nodeState: fc.constantFrom(null, "ready", "lost", "terminated", "draining"),
          prewarm: fc.boolean(),
          pendingCause: fc.constantFrom(
            null,
            "waiting_for_capacity" as const,
            "start_failed" as const,
          ),
          drainIntent: fc.constantFrom(null, "scale_down" as const, "park_candidate" as const),
          capturing: fc.boolean(),
        })
        .map((r) =>
          replica({
            id,
            ...r,
            nodeId: r.nodeState === null ? null : `node-${id}`,
            createdAt: new Date(NOW.getTime() - 600_000 + at * 1_000),
          }),
        );
    const inputArb = fc
      .record({
        desired: fc.integer({ min: 0, max: 6 }),
        hasDeployment: fc.boolean(),
        deleted: fc.boolean(),
        recentFailures: fc.integer({ min: 0, max: 4 }),
        count: fc.integer({ min: 0, max: 8 }),
      })
      .chain((e) =>
        fc
          .tuple(...Array.from({ length: e.count }, (_, i) => replicaArb(`r${i}`, i)))
          .map((replicas) =>
            input({
              endpoint: {
                desiredReplicas: e.desired,
                activeDeploymentId: e.hasDeployment ? CURRENT : null,
                deleted: e.deleted,
              },
              replicas,
              recentFailures: e.recentFailures,
            }),
          ),
      );
    fc.assert(
      fc.property(inputArb, (first) => {
        const decision = decideReconcile(first);
        const next = decideReconcile(carriedOut(first, decision));
        expect(next.drains).toEqual([]);
        expect(next.shortfall).toBe(0);
        expect(next.capacityNote).toBeNull();
        if (reconcileChangesNothing(decision)) expect(next).toEqual(decision);
      }),
      { numRuns: 500 },
    );
  });
});

/** The state after reconcile-endpoint wrote `decision` (its drains, its new replicas). */
function carriedOut(before: ReconcileInput, decision: ReconcileDecision): ReconcileInput {
  const drained = new Map(decision.drains.map((d) => [d.replicaId, d.drainIntent]));
  const replicas = before.replicas.map((r) => {
    const drainIntent = drained.get(r.id);
    return drainIntent ? { ...r, state: "draining" as const, drainIntent, updatedAt: NOW } : r;
  });
  for (let i = 0; i < decision.shortfall; i++)
    replicas.push(
      replica({
        id: `created-${i}`,
        state: "pending",
        deploymentId: before.endpoint.activeDeploymentId!,
        nodeId: null,
        nodeState: null,
        createdAt: NOW,
        updatedAt: NOW,
      }),
    );
  return { ...before, replicas };
}
