import { randomUUID } from "node:crypto";
import { type StartReplicaRequestInput } from "@thaw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type PhaseEvent, PhaseFailedError } from "../runtime.ts";
import { fakeDigest, fakeManifest } from "./testing/fake-tools.ts";
import { type FakeSetup, G, setupFakeRuntime } from "./testing/fake-runtime.ts";

const IMAGE = "registry.test:5000/models/llama:v1";

describe("wake path (fake ctr, fake engine)", () => {
  let fake: FakeSetup;

  beforeEach(async () => {
    fake = await setupFakeRuntime();
    await fake.tools.publish({
      ref: IMAGE,
      digest: fakeDigest("b"),
      manifest: fakeManifest(10, []),
    });
  });
  afterEach(async () => fake.dispose());

  const request = (
    overrides: Partial<StartReplicaRequestInput> = {},
  ): StartReplicaRequestInput => ({
    replicaId: randomUUID(),
    coldStartId: randomUUID(),
    path: "pull",
    deployment: { imageRef: IMAGE },
    gpus: [0],
    readiness: { port: fake.engine.port, path: "/health", timeoutSeconds: 5 },
    ...overrides,
  });

  /** A replica started, then put to sleep with its GPUs released (vLLM's calls). */
  async function sleepingReplica(level: 1 | 2): Promise<string> {
    const first = request();
    await fake.runtime.startReplica(first, () => undefined);
    await fake.runtime.parkReplica({
      replicaId: first.replicaId,
      gpus: "release",
      sleepLevel: level,
      engineSleep: { path: `/sleep?level=${level}` },
      engineWake: { path: "/wake_up" },
      ...(level === 2
        ? {
            engineAfterWake: [
              { path: "/collective_rpc", body: '{"method":"reload_weights"}' },
              { path: "/reset_prefix_cache" },
            ],
          }
        : {}),
    });
    return first.replicaId;
  }

  it("sleeps with the engine's sleep call and a pause, and reports the replica sleeping", async () => {
    const sleepingId = await sleepingReplica(1);
    expect(fake.engine.requests.at(-1)).toBe("POST /sleep?level=1");
    expect((await fake.actions()).at(-1)).toEqual(["ctr", ...G, "tasks", "pause", sleepingId]);
    const inventory = await fake.runtime.inventory();
    expect(inventory.warmReplicaIds).toEqual([]);
    expect(inventory.replicas).toEqual([
      { replicaId: sleepingId, containerId: sleepingId, state: "sleeping" },
    ]);
  });

  it("puts a parked (paused) replica to sleep: resume, the sleep call, pause again", async () => {
    const first = request();
    await fake.runtime.startReplica(first, () => undefined);
    await fake.runtime.parkReplica({ replicaId: first.replicaId });
    const before = (await fake.actions()).length;
    fake.engine.requests.length = 0;
    await fake.runtime.parkReplica({
      replicaId: first.replicaId,
      gpus: "release",
      sleepLevel: 1,
      engineSleep: { path: "/sleep?level=1" },
      engineWake: { path: "/wake_up" },
    });
    expect((await fake.actions()).slice(before)).toEqual([
      ["api", "Tasks.Resume", first.replicaId],
      ["ctr", ...G, "tasks", "pause", first.replicaId],
    ]);
    expect(fake.engine.requests).toEqual(["POST /sleep?level=1"]);
    expect((await fake.runtime.inventory()).sleepingReplicaIds).toEqual([first.replicaId]);
  });

  it("wakes at level 1: resume, the engine's wake call, then the probe", async () => {
    const sleepingId = await sleepingReplica(1);
    const before = (await fake.actions()).length;
    fake.engine.requests.length = 0;
    const events: PhaseEvent[] = [];
    const req = request({ path: "wake", sleepingReplicaId: sleepingId });
    const started = await fake.runtime.startReplica(req, (e) => events.push(e));

    expect(events.map((e) => e.phase)).toEqual(["load_weights", "warmup", "ready"]);
    expect((await fake.actions()).slice(before)).toEqual([["api", "Tasks.Resume", sleepingId]]);
    expect(fake.engine.requests).toEqual(["POST /wake_up", "GET /health"]);
    expect(events[0]!.attributes).toMatchObject({ fromReplicaId: sleepingId, sleepLevel: 1 });
    expect(events[0]!.attributes!.wakeSeconds).toBeGreaterThanOrEqual(0);
    expect(events[0]!.attributes).not.toHaveProperty("reloadSeconds");
    expect(events[1]!.attributes).toMatchObject({ probeAttempts: 1 });
    expect(started).toMatchObject({ replicaId: req.replicaId, containerId: sleepingId });
    expect((await fake.runtime.inventory()).replicas).toEqual([
      { replicaId: req.replicaId, containerId: sleepingId, state: "running" },
    ]);
  });

  it("wakes at level 2 and reloads the discarded weights before the probe", async () => {
    const sleepingId = await sleepingReplica(2);
    fake.engine.requests.length = 0;
    const events: PhaseEvent[] = [];
    await fake.runtime.startReplica(request({ path: "wake", sleepingReplicaId: sleepingId }), (e) =>
      events.push(e),
    );
    expect(fake.engine.requests).toEqual([
      "POST /wake_up",
      'POST /collective_rpc {"method":"reload_weights"}',
      "POST /reset_prefix_cache",
      "GET /health",
    ]);
    expect(events[0]!.attributes).toMatchObject({ sleepLevel: 2 });
    expect(events[0]!.attributes!.reloadSeconds).toBeGreaterThanOrEqual(0);
  });

  it("names load_weights and containerd's words when resume fails, and removes the broken replica", async () => {
    const sleepingId = await sleepingReplica(1);
    await fake.tools.failWhen("api", "Tasks.Resume", "failed to thaw cgroup: no such process");
    const error = await fake.runtime
      .startReplica(request({ path: "wake", sleepingReplicaId: sleepingId }), () => undefined)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PhaseFailedError);
    expect(error).toMatchObject({ phase: "load_weights" });
    expect((error as Error).message).toMatch(
      /resume the sleeping task: containerd Tasks\.Resume: failed to thaw cgroup: no such process/,
    );
    expect((await fake.actions()).slice(-3)).toEqual([
      ["ctr", ...G, "tasks", "kill", "-s", "SIGKILL", sleepingId],
      ["ctr", ...G, "tasks", "delete", sleepingId],
      ["ctr", ...G, "containers", "delete", sleepingId],
    ]);
    expect((await fake.runtime.inventory()).replicas).toEqual([]);
  });

  it("fails a wake when no replica sleeps here, or when it is only parked warm", async () => {
    const missing = randomUUID();
    const error = await fake.runtime
      .startReplica(request({ path: "wake", sleepingReplicaId: missing }), () => undefined)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ phase: "load_weights" });
    expect((error as Error).message).toContain(`no sleeping replica ${missing}`);

    const warm = request();
    await fake.runtime.startReplica(warm, () => undefined);
    await fake.runtime.parkReplica({ replicaId: warm.replicaId });
    const notAsleep = await fake.runtime
      .startReplica(request({ path: "wake", sleepingReplicaId: warm.replicaId }), () => undefined)
      .catch((e: unknown) => e);
    expect((notAsleep as Error).message).toContain(`no sleeping replica ${warm.replicaId}`);
  });
});
