import { randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { type StartReplicaRequestInput } from "@thaw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type PhaseEvent, PhaseFailedError } from "../runtime.ts";
import { fakeDigest, fakeManifest } from "./testing/fake-tools.ts";
import { type FakeSetup, G, setupFakeRuntime } from "./testing/fake-runtime.ts";

const ESTARGZ = "registry.test:5000/models/llama:v1-esgz";
const LAYERS = [
  { digest: fakeDigest("a"), size: 300_000_000 },
  { digest: fakeDigest("e"), size: 12_700_000_000 },
];
const MANIFEST = fakeManifest(2_000, LAYERS);

describe("lazy path (fake ctr-remote and ctr)", () => {
  let fake: FakeSetup;

  beforeEach(async () => {
    fake = await setupFakeRuntime();
    await fake.tools.publish({ ref: ESTARGZ, digest: fakeDigest("9"), manifest: MANIFEST });
  });
  afterEach(async () => fake.dispose());

  const request = (
    overrides: Partial<StartReplicaRequestInput> = {},
  ): StartReplicaRequestInput => ({
    replicaId: randomUUID(),
    coldStartId: randomUUID(),
    path: "lazy",
    deployment: {
      imageRef: "registry.test:5000/models/llama:v1",
      estargzImageRef: ESTARGZ,
      env: { HF_HOME: "/cache/hf" },
    },
    gpus: [0, 1],
    readiness: { port: fake.engine.port, path: "/health", timeoutSeconds: 5 },
    ...overrides,
  });

  it("rpulls through the stargz snapshotter, runs the container on it and probes", async () => {
    const events: PhaseEvent[] = [];
    const req = request();
    await fake.runtime.startReplica(req, (e) => events.push(e));

    expect(events.map((e) => e.phase)).toEqual(["prefetch", "create", "start", "ready"]);
    // prettier-ignore
    expect(await fake.actions()).toEqual([
      ["ctr-remote", ...G, "images", "rpull", "--plain-http", "--snapshotter", "stargz",
        "--label", "thaw.estargz=true", ESTARGZ],
      ["ctr", ...G, "run", "--detach", "--log-uri", `file://${fake.logDir}/${req.replicaId}.log`,
        "--net-host", "--cap-drop", "CAP_NET_RAW", "--seccomp",
        "--snapshotter", "stargz",
        "--label", `thaw.replica-id=${req.replicaId}`, "--label", `thaw.cold-start-id=${req.coldStartId}`,
        "--env", "HF_HOME=/cache/hf", "--gpus", "0", "--gpus", "1",
        "--", ESTARGZ, req.replicaId],
    ]);
    const [prefetch, create, start] = events;
    expect(prefetch!.bytes).toBeUndefined();
    expect(prefetch!.attributes).toMatchObject({
      imageDigest: fakeDigest("9"),
      imageBytes: Buffer.byteLength(MANIFEST) + 2_000 + 300_000_000 + 12_700_000_000,
      layers: 2,
      prefetchTimeoutSeconds: 30,
    });
    expect(create!.attributes).toMatchObject({ snapshotter: "stargz", containerId: req.replicaId });
    expect(start!.attributes).toMatchObject({ probeAttempts: 1 });
    expect(fake.engine.requests).toEqual(["GET /health"]);
    expect((await fake.runtime.inventory()).images).toContainEqual({
      digest: fakeDigest("9"),
      bytes: prefetch!.attributes!.imageBytes,
      estargz: true,
    });
  });

  it("hands a registry credential to ctr-remote through a hosts directory and to the snapshotter through its docker config", async () => {
    const dockerConfigPath = path.join(fake.tools.dir, "stargz-docker", "config.json");
    const pullAuthDir = path.join(fake.tools.dir, "pull-auth");
    const setup = await setupFakeRuntime({ config: { pullAuthDir, stargz: { dockerConfigPath } } });
    try {
      await setup.tools.publish({ ref: ESTARGZ, digest: fakeDigest("9"), manifest: MANIFEST });
      const password = "lazy-secret-0c41";
      await setup.runtime.startReplica(
        request({
          readiness: { port: setup.engine.port, path: "/health", timeoutSeconds: 5 },
          registryAuth: [{ registry: "registry.test:5000", username: "thaw", password }],
        }),
        () => undefined,
      );
      const [rpull] = await setup.actions();
      expect(rpull?.slice(0, 9)).toEqual([
        "ctr-remote",
        ...G,
        "images",
        "rpull",
        "--plain-http",
        "--hosts-dir",
      ]);
      expect(rpull?.[9]?.startsWith(path.join(pullAuthDir, "thaw-pull-auth-"))).toBe(true);
      expect(JSON.stringify(rpull)).not.toContain(password);
      expect(await readdir(pullAuthDir)).toEqual([]);
      expect(JSON.parse(await readFile(dockerConfigPath, "utf8"))).toEqual({
        auths: {
          "registry.test:5000": { auth: Buffer.from(`thaw:${password}`).toString("base64") },
        },
      });
    } finally {
      await setup.dispose();
    }
  });

  it("names the prefetch phase and the snapshotter's error when rpull fails, and creates nothing", async () => {
    await fake.tools.failWhen(
      "ctr-remote",
      "rpull",
      "ctr: failed to prepare extraction snapshot: failed to resolve layer: failed to fetch: context deadline exceeded",
    );
    const events: PhaseEvent[] = [];
    const error = await fake.runtime
      .startReplica(request(), (e) => events.push(e))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PhaseFailedError);
    expect(error).toMatchObject({ phase: "prefetch" });
    const message = (error as Error).message;
    expect(message).toContain("pull the eStargz image through the stargz snapshotter");
    expect(message).toContain(
      "failed to resolve layer: failed to fetch: context deadline exceeded",
    );
    expect(message).toContain("infra/agent/containerd-stargz-grpc/config.toml");
    expect(events).toEqual([]);
    expect((await fake.actions()).map((c) => c[0])).toEqual(["ctr-remote"]);
  });

  it("reads from the snapshotter's metrics whether every layer's prefetch completed", async () => {
    const metrics = http.createServer((_req, res) =>
      res.end(
        [
          "# TYPE stargz_fs_operation_duration_milliseconds histogram",
          `stargz_fs_operation_duration_milliseconds_sum{layer="${LAYERS[0]!.digest}",operation_type="all_prefetches_completed"} 1250`,
          `stargz_fs_operation_duration_milliseconds_sum{layer="${LAYERS[1]!.digest}",operation_type="mount"} 40`,
        ].join("\n"),
      ),
    );
    await new Promise<void>((resolve) => metrics.listen(0, "127.0.0.1", resolve));
    const { port } = metrics.address() as { port: number };
    const other = await setupFakeRuntime({
      config: { stargz: { metricsUrl: `http://127.0.0.1:${port}/metrics` } },
    });
    try {
      await other.tools.publish({ ref: ESTARGZ, digest: fakeDigest("9"), manifest: MANIFEST });
      const events: PhaseEvent[] = [];
      const req = {
        ...request(),
        readiness: { port: other.engine.port, path: "/health", timeoutSeconds: 5 },
      };
      await other.runtime.startReplica(req, (e) => events.push(e));
      expect(events[0]!.attributes).toMatchObject({
        prefetchCompletedLayers: 1,
        prefetchComplete: false,
        prefetchMaxSeconds: 1.25,
      });
    } finally {
      await other.dispose();
      await new Promise<void>((resolve) => metrics.close(() => resolve()));
    }
  });

  it("refuses an agent deadline shorter than the snapshotter's prefetch budget", async () => {
    const { ContainerdRuntime } = await import("./containerd-runtime.ts");
    expect(
      () =>
        new ContainerdRuntime({
          address: "/x.sock",
          logDir: "/tmp",
          stargz: { prefetchTimeoutSeconds: 120 },
          timeouts: { remotePullSeconds: 60 },
        }),
    ).toThrow(/remotePullSeconds \(60\) must exceed the stargz prefetch timeout \(120\)/);
  });
});
