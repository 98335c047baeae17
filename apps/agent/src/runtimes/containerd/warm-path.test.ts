import { randomUUID } from "node:crypto";
import { type StartReplicaRequestInput } from "@thaw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type PhaseEvent, PhaseFailedError } from "../runtime.ts";
import { fakeDigest, fakeManifest } from "./testing/fake-tools.ts";
import { type FakeSetup, G, setupFakeRuntime } from "./testing/fake-runtime.ts";

const IMAGE = "registry.test:5000/models/llama:v1";

describe("warm path (fake ctr)", () => {
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

  async function parkedReplica(sleep: boolean): Promise<string> {
    const first = request();
    await fake.runtime.startReplica(first, () => undefined);
    await fake.runtime.parkReplica({
      replicaId: first.replicaId,
      ...(sleep
        ? { engineSleep: { path: "/sleep?level=1" }, engineWake: { path: "/wake_up" } }
        : {}),
    });
    return first.replicaId;
  }

  it("parks with engine sleep + pause, and hands over with resume + wake + probe", async () => {
    const parkedId = await parkedReplica(true);
    expect((await fake.runtime.inventory()).warmReplicaIds).toEqual([parkedId]);
    const before = (await fake.actions()).length;
    fake.engine.requests.length = 0;

    const events: PhaseEvent[] = [];
    const req = request({ path: "warm", warmReplicaId: parkedId });
    const started = await fake.runtime.startReplica(req, (e) => events.push(e));

    expect(events.map((e) => e.phase)).toEqual(["handover", "ready"]);
    expect((await fake.actions()).slice(before)).toEqual([["api", "Tasks.Resume", parkedId]]);
    expect(fake.engine.requests).toEqual(["POST /wake_up", "GET /health"]);
    expect(events[0]!.attributes).toMatchObject({ fromReplicaId: parkedId, probeAttempts: 1 });
    expect(events[0]!.attributes!.wakeSeconds).toBeGreaterThanOrEqual(0);
    expect(events[1]).toMatchObject({ seconds: 0 });
    expect(started).toMatchObject({ replicaId: req.replicaId, containerId: parkedId });
    const inventory = await fake.runtime.inventory();
    expect(inventory.warmReplicaIds).toEqual([]);
    expect(inventory.replicas).toEqual([
      { replicaId: req.replicaId, containerId: parkedId, state: "running" },
    ]);
  });

  it("records the park commands", async () => {
    const parkedId = await parkedReplica(true);
    expect((await fake.actions()).at(-1)).toEqual(["ctr", ...G, "tasks", "pause", parkedId]);
    expect(fake.engine.requests.at(-1)).toBe("POST /sleep?level=1");
  });

  it("names the handover phase and containerd's words when resume fails, and removes the broken replica", async () => {
    const parkedId = await parkedReplica(false);
    await fake.tools.failWhen(
      "api",
      "Tasks.Resume",
      "failed to thaw cgroup: device or resource busy",
    );
    const error = await fake.runtime
      .startReplica(request({ path: "warm", warmReplicaId: parkedId }), () => undefined)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PhaseFailedError);
    expect(error).toMatchObject({ phase: "handover" });
    expect((error as Error).message).toMatch(
      /resume the parked task: containerd Tasks\.Resume: failed to thaw cgroup: device or resource busy/,
    );
    // The paused task cannot be resumed, so it is killed outright and removed.
    expect((await fake.actions()).slice(-3)).toEqual([
      ["ctr", ...G, "tasks", "kill", "-s", "SIGKILL", parkedId],
      ["ctr", ...G, "tasks", "delete", parkedId],
      ["ctr", ...G, "containers", "delete", parkedId],
    ]);
    expect((await fake.runtime.inventory()).warmReplicaIds).toEqual([]);
  });

  it("fails handover when no parked replica exists", async () => {
    const missing = randomUUID();
    const error = await fake.runtime
      .startReplica(request({ path: "warm", warmReplicaId: missing }), () => undefined)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ phase: "handover" });
    expect((error as Error).message).toContain(`no parked replica ${missing}`);
  });

  it("resumes a paused replica before stopping it", async () => {
    const parkedId = await parkedReplica(false);
    const before = (await fake.actions()).length;
    const stopped = await fake.runtime.stopReplica(parkedId);
    expect(stopped).toMatchObject({ found: true, signal: "SIGTERM" });
    expect((await fake.actions()).slice(before)).toEqual([
      ["ctr", ...G, "tasks", "resume", parkedId],
      ["ctr", ...G, "tasks", "kill", "-s", "SIGTERM", parkedId],
      ["ctr", ...G, "tasks", "delete", parkedId],
      ["ctr", ...G, "containers", "delete", parkedId],
    ]);
  });
});
