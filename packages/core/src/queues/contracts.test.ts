import { describe, expect, it } from "vitest";
import { SWEEP_SLICE_ENDPOINTS } from "../placement/find-lost-work.ts";
import { jobOf, whatIfJobOf, type QueueKey } from "./contracts.ts";

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

describe("the sweep's jobs", () => {
  const other = "0190a3c4-0000-7000-8000-000000000002";
  it("are one per slice, with a deduplication key apart from the live jobs'", () => {
    const slice = jobOf("sweep", { endpointIds: [id, other] });
    expect(slice).toEqual({
      name: "sweep",
      data: { endpointIds: [id, other] },
      opts: { deduplication: { id: `sweep-${id}+1`, keepLastIfActive: true } },
    });
    const keys = [
      slice.opts.deduplication.id,
      jobOf("sweep", { endpointIds: [id] }).opts.deduplication.id,
      jobOf("reconcile", { endpointId: id }).opts.deduplication.id,
      jobOf("warmPool", { endpointId: id }).opts.deduplication.id,
    ];
    expect(new Set(keys).size).toBe(4);
  });
  it("name endpoints only, at least one and at most a slice's worth", () => {
    expect(() => jobOf("sweep", { endpointIds: [] })).toThrow();
    expect(() =>
      jobOf("sweep", { endpointIds: Array.from({ length: SWEEP_SLICE_ENDPOINTS + 1 }, () => id) }),
    ).toThrow();
    expect(() => jobOf("sweep", { endpointIds: [id], work: "place" } as never)).toThrow();
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
