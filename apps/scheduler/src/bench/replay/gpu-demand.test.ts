import { describe, expect, it } from "vitest";
import { gpuDemand } from "./gpu-demand.ts";

describe("gpuDemand", () => {
  const one = { gpuType: "A10G", gpus: 1, concurrency: 2 };

  it("needs a replica per `concurrency` requests in flight", () => {
    const requests = [
      { at: 0, endpoint: "a", seconds: 30 },
      { at: 10, endpoint: "a", seconds: 30 },
      { at: 20, endpoint: "a", seconds: 30 },
    ];
    const [demand] = gpuDemand(requests, { a: one }, 0);
    // Three in flight at t = 20 with two slots a replica: two replicas.
    expect(demand).toMatchObject({ gpuType: "A10G", peak: 2 });
  });

  it("holds a replica through every minute of a long request and for the keep-alive after", () => {
    // Busy 0–250 s (minutes 0–4), then kept 600 s (10 more minutes): 15 of the buckets.
    const requests = [{ at: 0, endpoint: "a", seconds: 250 }];
    const [demand] = gpuDemand(requests, { a: one }, 600);
    const buckets = Math.ceil((250 + 600) / 60) + 1;
    expect(demand!.peak).toBe(1);
    expect(demand!.mean).toBeCloseTo(15 / buckets, 10);
  });

  it("counts GPUs, not replicas, and keeps GPU types apart", () => {
    const requests = [
      { at: 0, endpoint: "big", seconds: 5 },
      { at: 1, endpoint: "small", seconds: 5 },
      { at: 2, endpoint: "small2", seconds: 5 },
    ];
    const demand = gpuDemand(
      requests,
      {
        big: { gpuType: "L40S", gpus: 4, concurrency: 8 },
        small: one,
        small2: one,
      },
      0,
    );
    expect(Object.fromEntries(demand.map((d) => [d.gpuType, d.peak]))).toEqual({
      L40S: 4,
      A10G: 2,
    });
  });

  it("releases a replica once the keep-alive has run out", () => {
    // Two requests an hour apart with a 10-minute keep-alive never overlap: peak 1, not 2,
    // and the GPU is idle (0) for most of the hour.
    const requests = [
      { at: 0, endpoint: "a", seconds: 5 },
      { at: 3600, endpoint: "a", seconds: 5 },
    ];
    const [demand] = gpuDemand(requests, { a: one }, 600);
    expect(demand!.peak).toBe(1);
    expect(demand!.mean).toBeLessThan(0.5);
  });

  it("holds a starting replica's GPUs for its start as well as its keep-alive", () => {
    const requests = [
      { at: 0, endpoint: "a", seconds: 5 },
      { at: 3600, endpoint: "b", seconds: 5 },
    ];
    const specs = { a: { ...one, startSeconds: 3300 }, b: one };
    // a: held 0–3300+600 s, so still held when b arrives at 3600 s: two GPUs at once.
    expect(gpuDemand(requests, specs, 600)[0]!.peak).toBe(2);
    expect(gpuDemand(requests, { a: one, b: one }, 600)[0]!.peak).toBe(1);
  });

  it("refuses a request of an endpoint it has no spec for", () => {
    expect(() => gpuDemand([{ at: 0, endpoint: "x", seconds: 1 }], {}, 0)).toThrow(/'x'/);
  });
});
