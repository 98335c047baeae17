import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeContainerdApi, type FakeContainerdApi } from "../testing/fake-containerd-api.ts";
import { ContainerdApi, containerdServices } from "./containerd-api.ts";
import { writeFrame } from "./content-writer.ts";

describe("Content.Write messages built in place", () => {
  const method = containerdServices().Content!.service.Write!;
  const decode = (message: Buffer) => {
    expect(message[0]).toBe(0);
    expect(message.readUInt32BE(1)).toBe(message.length - 5);
    return method.requestDeserialize(message.subarray(5)) as {
      action: string;
      offset: number;
      data: Buffer;
    };
  };

  it("decodes with containerd's own message definition, at any offset and length", () => {
    for (const [offset, length] of [
      [0, 1],
      [127, 128],
      [1 << 20, 1 << 20],
      [2 ** 40 + 3, 300_000],
    ] as const) {
      const frame = writeFrame(1 << 20);
      for (let i = 0; i < length; i++) frame.data[i] = i % 251;
      const got = decode(frame.finish(length, offset));
      expect(got.action).toBe("WRITE");
      expect(got.offset).toBe(offset);
      expect(got.data.length).toBe(length);
      expect(got.data.equals(frame.data.subarray(0, length))).toBe(true);
    }
  });
});

describe("Content.Write against a containerd that already holds the blob", () => {
  let dir: string;
  let fake: FakeContainerdApi;
  let api: ContainerdApi;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "thaw-content-writer-"));
    fake = await startFakeContainerdApi(dir, {});
    api = new ContainerdApi(fake.socket, "thaw");
  });
  afterAll(async () => {
    api.close();
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("writes a blob over several messages, then takes containerd's 'exists' as done", async () => {
    const blob = Buffer.alloc(3 * (1 << 20) + 5, 7);
    const digest = `sha256:${"e".repeat(64)}`;
    const chunks = [blob.subarray(0, 100), blob.subarray(100, 2_000_000), blob.subarray(2_000_000)];
    await api.writeContent("w1", { digest, size: blob.length }, chunks, { a: "b" });
    expect(await api.contentInfo(digest)).toMatchObject({ size: blob.length, labels: { a: "b" } });
    expect((await api.readContent(digest)).equals(blob)).toBe(true);
    await expect(
      api.writeContent("w2", { digest, size: blob.length }, [blob], {}),
    ).resolves.toBeUndefined();
  });
});
