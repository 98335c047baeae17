import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContainerdRuntime } from "../containerd-runtime.ts";
import { runTool } from "../run-tool.ts";
import {
  ensureContainerTools,
  type LocalStack,
  mountPointsUnder,
  startLocalStack,
} from "../testing/local-stack.ts";

// The agent's own pull of a many-layer image on a real containerd: every layer unpacked onto
// its parent under the chain ID containerd computes, the image complete and unpacked after a
// GC, and a container started from it sees every layer's files.

const isRoot = process.getuid?.() === 0;

describe.skipIf(!isRoot)("pull over containerd's API, a three-layer image", () => {
  let stack: LocalStack;
  let runtime: ContainerdRuntime;
  const payload = [300_000, 2_000_000];

  beforeAll(async () => {
    await ensureContainerTools();
    stack = await startLocalStack({ imageName: "thaw/layers", payloadLayers: payload });
    runtime = new ContainerdRuntime({
      address: stack.address,
      namespace: stack.namespace,
      logDir: stack.logDir,
      plainHttpRegistries: [stack.registryHost],
      stopGraceSeconds: 0,
    });
  }, 900_000);

  afterAll(async () => {
    const dir = stack?.dir;
    await stack?.stop();
    if (dir) expect(await mountPointsUnder(dir)).toEqual([]);
  }, 120_000);

  const ctr = async (...args: string[]) =>
    (
      await runTool(
        { file: "ctr", args: ["-a", stack.address, "-n", stack.namespace, ...args] },
        { what: "inspect containerd", timeoutMs: 30_000 },
      )
    ).stdout;

  it("unpacks each layer onto its parent, and ctr finds the image complete and unpacked after a GC", async () => {
    expect(stack.image.layers).toBe(3);
    const pulled = await runtime.host.apiPull(stack.image.ref, undefined, undefined);
    expect(pulled).toMatchObject({ layers: 3, fetchedBytes: stack.image.bytes });
    const lease = (await ctr("leases", "create")).trim().split(/\s+/)[0]!;
    await ctr("leases", "rm", "--sync", lease);
    expect((await ctr("images", "check", "-q", `name==${stack.image.ref}`)).trim()).toBe(
      stack.image.ref,
    );
    // Three committed snapshots in one chain: base ← middle ← top.
    const rows = (await ctr("snapshots", "ls"))
      .split("\n")
      .slice(1)
      .map((l) => l.trim().split(/\s+/))
      .filter((r) => r.length > 1);
    expect(rows.map((r) => r.at(-1))).toEqual(["Committed", "Committed", "Committed"]);
    const parentOf = new Map(rows.map((r) => [r[0]!, r.length === 3 ? r[1]! : undefined]));
    const top = [...parentOf.keys()].find((k) => ![...parentOf.values()].includes(k))!;
    const chain = [top];
    for (let p = parentOf.get(top); p; p = parentOf.get(p)) chain.push(p);
    expect(chain).toHaveLength(3);

    // A container from it sees the top layer's file at its full size.
    const req = {
      replicaId: randomUUID(),
      coldStartId: randomUUID(),
      path: "pull" as const,
      deployment: {
        imageRef: stack.image.ref,
        args: [
          "/bin/busybox",
          "sh",
          "-c",
          `test "$(/bin/busybox stat -c %s /payload/1.bin)" = ${payload[1]} && test -f /payload/0.bin && exec /bin/busybox httpd -f -p 127.0.0.1:${stack.image.httpPort} -h /www`,
        ],
      },
      gpus: [],
      readiness: { port: stack.image.httpPort, path: "/ready", timeoutSeconds: 20 },
    };
    const started = await runtime.startReplica(req, () => undefined);
    expect(started.readiness.status).toBe(200);
    await runtime.stopReplica(req.replicaId);
  });
});
