import { describe, expect, it } from "vitest";
import { jobOf, SWEEP_JOB_PRIORITY, sweepJobOf, whatIfJobOf, type QueueKey } from "./contracts.ts";

const id = "0190a3c4-0000-7000-8000-000000000001";

describe("jobOf", () => {
  it("deduplicates on the contract's entity key, keeping one more run while a job is active", () => {
    expect(jobOf("reconcile", { endpointId: id })).toEqual({
      name: "reconcile",
      data: { endpointId: id },
      opts: { deduplication: { id: `reconcile-${id}`, keepLastIfActive: true } },
    });
    expect(jobOf("dispatch", { coldStartIds: [id, id] }).opts.deduplication.id).toBe(
      `dispatch-${id}+1`,
    );
    expect(jobOf("fleet", { reason: "gc" }).opts.deduplication.id).toBe("fleet-gc");
  });

  it("refuses a payload its contract does not allow, whatever the caller's types said", () => {
    for (const [queue, payload] of [
      ["reconcile", { endpointId: "not-a-uuid" }],
      ["place", { replicaId: id, secret: "x" }],
      ["dispatch", { coldStartIds: [] }],
    ] as const)
      expect(() => jobOf(queue as QueueKey, payload as never), queue).toThrow();
  });
});

describe("sweepJobOf", () => {
  it("yields to live jobs: a lower priority and a deduplication key apart from theirs", () => {
    expect(sweepJobOf("reconcile", { endpointId: id })).toEqual({
      name: "reconcile",
      data: { endpointId: id },
      opts: {
        deduplication: { id: `sweep-reconcile-${id}`, keepLastIfActive: true },
        priority: SWEEP_JOB_PRIORITY,
      },
    });
    expect(SWEEP_JOB_PRIORITY).toBeGreaterThan(0);
    expect(sweepJobOf("warmPool", { endpointId: id }).opts.deduplication.id).not.toBe(
      jobOf("warmPool", { endpointId: id }).opts.deduplication.id,
    );
  });
});

describe("whatIfJobOf", () => {
  const payload = {
    orgId: id,
    endpointId: id,
    from: "2026-11-20T00:00:00.000Z",
    to: "2026-11-27T00:00:00.000Z",
    key: "0123456789abcdef0123456789abcdef",
  };
  it("names the job by the run's key, so the same run is found again, and never retries it", () => {
    const job = whatIfJobOf(payload);
    expect(job.opts.jobId).toBe(`what-if-${id}-${payload.key}`);
    expect(job.opts.attempts).toBe(1);
    expect(whatIfJobOf({ ...payload, key: "f".repeat(32) }).opts.jobId).not.toBe(job.opts.jobId);
  });
  it("refuses a key that is not the hash's hex", () => {
    expect(() => whatIfJobOf({ ...payload, key: "what-if:evil" })).toThrow();
  });
});
