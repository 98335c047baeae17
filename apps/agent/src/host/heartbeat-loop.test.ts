import { describe, expect, it } from "vitest";
import { HeartbeatLoop } from "./heartbeat-loop.ts";

describe("HeartbeatLoop", () => {
  it("beats every host once per interval, spread over it, with bounded concurrency", async () => {
    const beats: { name: string; at: number }[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const t0 = Date.now();
    const hosts = Array.from({ length: 20 }, (_, i) => ({
      name: `h${i}`,
      tick: async () => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        beats.push({ name: `h${i}`, at: Date.now() - t0 });
        await new Promise((resolve) => setTimeout(resolve, 30));
        inFlight--;
      },
    }));
    const loop = new HeartbeatLoop(hosts, { intervalMs: 200, resolutionMs: 5, maxConcurrent: 4 });
    loop.start();
    await new Promise((resolve) => setTimeout(resolve, 450));
    await loop.stop();
    expect(maxInFlight).toBeLessThanOrEqual(4);
    const perHost = new Map<string, number>();
    for (const beat of beats) perHost.set(beat.name, (perHost.get(beat.name) ?? 0) + 1);
    // ~450 ms at one beat per 200 ms: two or three beats each, never a burst.
    for (const host of hosts) expect(perHost.get(host.name)).toBeGreaterThanOrEqual(2);
    for (const count of perHost.values()) expect(count).toBeLessThanOrEqual(3);
    // Spread: the first beats do not all happen at once.
    const firsts = hosts.map((h) => beats.find((b) => b.name === h.name)?.at ?? 0);
    expect(Math.max(...firsts) - Math.min(...firsts)).toBeGreaterThan(100);
  });
});
