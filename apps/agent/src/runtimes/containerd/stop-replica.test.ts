import { randomUUID } from "node:crypto";
import { type StartReplicaRequestInput } from "@thaw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fakeDigest, fakeManifest } from "./testing/fake-tools.ts";
import { type FakeSetup, G, setupFakeRuntime } from "./testing/fake-runtime.ts";

const IMAGE = "registry.test:5000/models/llama:v1";

describe("stopping a replica (fake ctr)", () => {
  let fake: FakeSetup;

  beforeEach(async () => {
    fake = await setupFakeRuntime();
    await fake.tools.publish({
      ref: IMAGE,
      digest: fakeDigest("d"),
      manifest: fakeManifest(10, []),
    });
  });
  afterEach(async () => fake.dispose());

  async function runningReplica(): Promise<string> {
    const request: StartReplicaRequestInput = {
      replicaId: randomUUID(),
      coldStartId: randomUUID(),
      path: "pull",
      deployment: { imageRef: IMAGE },
      gpus: [0],
      readiness: { port: fake.engine.port, path: "/health", timeoutSeconds: 5 },
    };
    await fake.runtime.startReplica(request, () => undefined);
    return request.replicaId;
  }

  it("runs one stop when the same stop arrives twice (a client retry after a timeout)", async () => {
    const id = await runningReplica();
    const before = (await fake.actions()).length;
    const [first, second] = await Promise.all([
      fake.runtime.stopReplica(id),
      fake.runtime.stopReplica(id),
    ]);
    expect(first).toEqual(second);
    expect(first).toMatchObject({ found: true, signal: "SIGTERM" });
    expect((await fake.actions()).slice(before)).toEqual([
      ["ctr", ...G, "tasks", "kill", "-s", "SIGTERM", id],
      ["ctr", ...G, "tasks", "delete", id],
      ["ctr", ...G, "containers", "delete", id],
    ]);
    // Once it has finished, a later stop finds nothing and says so.
    await expect(fake.runtime.stopReplica(id)).resolves.toMatchObject({ found: false });
  });

  it("accepts a task that something else deleted while it was being deleted", async () => {
    const id = await runningReplica();
    await fake.tools.failWhen(
      "ctr",
      "tasks delete",
      "ctr: failed to load task: no running task found: not found",
      { removingTask: id },
    );
    await expect(fake.runtime.stopReplica(id)).resolves.toMatchObject({ found: true });
    expect((await fake.actions()).at(-1)).toEqual(["ctr", ...G, "containers", "delete", id]);
  });

  it("fails with ctr's message when the task is still there after a failed delete", async () => {
    const id = await runningReplica();
    await fake.tools.failWhen("ctr", "tasks delete", "ctr: task must be stopped before deletion");
    await expect(fake.runtime.stopReplica(id)).rejects.toThrow(
      /delete the task.*task must be stopped before deletion/s,
    );
  });
});
