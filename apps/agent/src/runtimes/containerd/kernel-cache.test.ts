import { execFileSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { mkdir, mkdtemp, readFile, readdir, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type StartReplicaRequestInput, StartReplicaRequest } from "@thaw/protocol";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { type PhaseEvent } from "../runtime.ts";
import { KERNEL_CACHE_MEDIA } from "./kernel-cache.ts";
import { fakeDigest, fakeManifest } from "./testing/fake-tools.ts";
import { type FakeSetup, G, setupFakeRuntime } from "./testing/fake-runtime.ts";

// The kernel-cache store on a containerd host, against the fake tools (GNU tar is the real
// one): the deployment's directory mounted into the engine with its cache variables, a stored
// cache fetched into it before the container is created (and a failed fetch that still
// starts), and a capture packed as a single-layer OCI image, imported and pushed. The real
// round trip through containerd and a registry is in containerd-runtime.integration.test.ts.

const STORE = "registry.test:5000/thaw-kernel-caches";
const digest = fakeDigest("9");
const pinned = `ghcr.io/thaw/llama@${digest}`;
const deploymentId = "7d0c3b8e-93a1-4d55-9c1e-0e6a2b1f4c55";
const kernelCacheId = "c3a1f7e2-0b4d-4e8a-9f61-2d5b7c9e1a03";
const sha256 = (bytes: Buffer | string) =>
  `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

/** A cache as an engine leaves it: torch.compile's and Triton's artifacts under their roots. */
const CACHE_FILES: Record<string, string> = {
  "vllm/torch_compile_cache/3f2a/rank_0_0/model": "compiled graph",
  "triton/9b1c/matmul_kernel.cubin": "cubin bytes",
  "flashinfer/batch_prefill.so": "jit module",
};

async function writeFiles(root: string, files: Record<string, string>) {
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, file)), { recursive: true });
    await writeFile(path.join(root, file), content);
  }
}

async function readTree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    out[path.relative(root, full)] = await readFile(full, "utf8");
  }
  return out;
}

describe("kernel-cache store (fake ctr, real tar)", () => {
  let fake: FakeSetup;
  let warnings: { msg: string; error?: string }[];
  afterEach(async () => fake?.dispose());

  const setup = async () => {
    warnings = [];
    const log = pino(
      { level: "warn" },
      { write: (line: string) => void warnings.push(JSON.parse(line) as (typeof warnings)[0]) },
    );
    fake = await setupFakeRuntime({ config: { log } });
    await fake.tools.publish({
      ref: pinned,
      digest,
      manifest: fakeManifest(5, [{ digest: fakeDigest("a"), size: 100 }]),
    });
    return fake;
  };
  const cacheDir = () => path.join(fake.runtime.host.config.kernelCacheDir, deploymentId);

  const request = (
    overrides: Partial<StartReplicaRequestInput> = {},
  ): StartReplicaRequestInput => ({
    replicaId: randomUUID(),
    coldStartId: randomUUID(),
    path: "pull",
    deployment: {
      deploymentId,
      imageRef: "ghcr.io/thaw/llama:v1",
      imageDigest: digest,
      args: ["vllm", "serve", "meta-llama/Llama-3.1-8B"],
    },
    gpus: [0],
    readiness: { port: fake.engine.port, path: "/health", timeoutSeconds: 5 },
    ...overrides,
  });

  /** A cache in the store as a capture pushes it: manifest → one uncompressed tar layer. */
  const storeCache = async (files: Record<string, string>) => {
    const src = await mkdtemp(path.join(os.tmpdir(), "thaw-cache-src-"));
    await writeFiles(src, files);
    const tar = execFileSync("tar", ["--create", "--file", "-", "--directory", src, "."]);
    const layer = await fake.tools.blob(KERNEL_CACHE_MEDIA.layer, tar);
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: KERNEL_CACHE_MEDIA.manifest,
      config: { mediaType: KERNEL_CACHE_MEDIA.config, digest: fakeDigest("f"), size: 2 },
      layers: [layer],
    });
    const ref = `${STORE}@${sha256(manifest)}`;
    await fake.tools.publish({ ref, digest: sha256(manifest), manifest });
    return { ref, layer };
  };

  const runOf = async () => (await fake.actions()).find((c) => c[5] === "run")!;
  const envOf = (run: string[]) => run.flatMap((arg, i) => (run[i - 1] === "--env" ? [arg] : []));

  it("mounts the deployment's directory (0700) and points the engine's caches into it; the deployment's env wins", async () => {
    await setup();
    const req = request();
    req.deployment.env = { TRITON_CACHE_DIR: "/models/triton" };
    const events: PhaseEvent[] = [];
    await fake.runtime.startReplica(req, (e) => events.push(e));
    expect(events.map((e) => e.phase)).toEqual(["pull", "create", "start", "ready"]);
    const run = await runOf();
    expect(run).toContain("--mount");
    expect(run[run.indexOf("--mount") + 1]).toBe(
      `type=bind,src=${cacheDir()},dst=/thaw/kernel-cache,options=rbind:rw`,
    );
    expect(envOf(run)).toEqual([
      "VLLM_CACHE_ROOT=/thaw/kernel-cache/vllm",
      "TRITON_CACHE_DIR=/models/triton",
      "TORCHINDUCTOR_CACHE_DIR=/thaw/kernel-cache/inductor",
      "FLASHINFER_WORKSPACE_BASE=/thaw/kernel-cache/flashinfer",
      "DG_JIT_CACHE_DIR=/thaw/kernel-cache/deep_gemm",
    ]);
    expect((await stat(cacheDir())).mode & 0o777).toBe(0o700);
  });

  it("mounts nothing for a start without a deployment id", async () => {
    await setup();
    const req = request();
    delete req.deployment.deploymentId;
    await fake.runtime.startReplica(req, () => undefined);
    const run = await runOf();
    expect(run).not.toContain("--mount");
    expect(envOf(run)).toEqual([]);
  });

  it("fetches a stored cache by digest into the directory before the container is created", async () => {
    await setup();
    const { ref, layer } = await storeCache(CACHE_FILES);
    await fake.tools.forgetCalls();
    const req = request({
      kernelCache: { fetch: { kernelCacheId, ref, bytes: layer.size } },
    });
    const events: PhaseEvent[] = [];
    await fake.runtime.startReplica(req, (e) => events.push(e));
    expect(events.map((e) => e.phase)).toEqual([
      "pull",
      "fetch_kernel_cache",
      "create",
      "start",
      "ready",
    ]);
    expect(events[1]).toMatchObject({
      bytes: layer.size,
      attributes: { kernelCacheId, ref },
    });
    const calls = await fake.tools.calls();
    const ctr = calls.filter((c) => c[0] === "ctr").map((c) => c.slice(5));
    // prettier-ignore
    expect(ctr).toEqual([
      ["images", "pull", pinned],
      // By digest from the operator's store (plain HTTP: it is listed so), labelled as a cache.
      ["content", "fetch", "--plain-http", "--label", `thaw.kernel-cache-id=${kernelCacheId}`, ref],
      // Its manifest, then its one layer (streamed into tar).
      ["content", "get", ref.split("@")[1]!],
      ["content", "get", layer.digest],
      // The cache is in its directory now: the image record goes.
      ["images", "rm", ref],
      expect.arrayContaining(["run", "--mount"]) as unknown as string[],
    ]);
    expect(await readTree(cacheDir())).toEqual(CACHE_FILES);
    // Unpacked beside the directory and renamed onto it: nothing left over.
    expect(await readdir(fake.runtime.host.config.kernelCacheDir)).toEqual([deploymentId]);
    expect((await stat(cacheDir())).mode & 0o777).toBe(0o700);
  });

  it("starts all the same when the fetch fails: no fetch phase, a cold directory, create says why", async () => {
    await setup();
    const { ref, layer } = await storeCache(CACHE_FILES);
    await fake.tools.failWhen(
      "ctr",
      "content fetch",
      "ctr: failed to resolve reference: unexpected status 503 Service Unavailable",
    );
    const events: PhaseEvent[] = [];
    const started = await fake.runtime.startReplica(
      request({ kernelCache: { fetch: { kernelCacheId, ref, bytes: layer.size } } }),
      (e) => events.push(e),
    );
    expect(started.readiness.status).toBe(200);
    expect(events.map((e) => e.phase)).toEqual(["pull", "create", "start", "ready"]);
    const create = events[1]!;
    expect(create.attributes).toMatchObject({ kernelCacheFetch: "failed" });
    expect(create.attributes!.kernelCacheFetchSeconds).toBeGreaterThanOrEqual(0);
    expect(String(create.attributes!.kernelCacheFetchError)).toMatch(/503 Service Unavailable/);
    expect(await readdir(cacheDir())).toEqual([]);
    expect(warnings).toEqual([
      expect.objectContaining({
        msg: "kernel-cache fetch failed; the engine starts with a cold cache directory",
        error: expect.stringMatching(/503 Service Unavailable/) as string,
      }),
    ]);
  });

  it("leaves no half-unpacked cache when the layer is not a tar", async () => {
    await setup();
    const layer = await fake.tools.blob(KERNEL_CACHE_MEDIA.layer, "this is not a tar archive");
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: KERNEL_CACHE_MEDIA.manifest,
      config: { mediaType: KERNEL_CACHE_MEDIA.config, digest: fakeDigest("f"), size: 2 },
      layers: [layer],
    });
    const ref = `${STORE}@${sha256(manifest)}`;
    await fake.tools.publish({ ref, digest: sha256(manifest), manifest });
    const events: PhaseEvent[] = [];
    await fake.runtime.startReplica(
      request({ kernelCache: { fetch: { kernelCacheId, ref, bytes: layer.size } } }),
      (e) => events.push(e),
    );
    expect(events.map((e) => e.phase)).toEqual(["pull", "create", "start", "ready"]);
    expect(String(events[1]!.attributes!.kernelCacheFetchError)).toMatch(/unpack the kernel cache/);
    expect(await readdir(fake.runtime.host.config.kernelCacheDir)).toEqual([deploymentId]);
    expect(await readdir(cacheDir())).toEqual([]);
  });

  it("does not fetch into a directory where this host kept the deployment's own caches", async () => {
    await setup();
    const { ref, layer } = await storeCache({ "triton/other.cubin": "from the store" });
    await writeFiles(cacheDir(), { "triton/here.cubin": "compiled on this host" });
    const events: PhaseEvent[] = [];
    await fake.runtime.startReplica(
      request({ kernelCache: { fetch: { kernelCacheId, ref, bytes: layer.size } } }),
      (e) => events.push(e),
    );
    expect(events.map((e) => e.phase)).toEqual(["pull", "create", "start", "ready"]);
    expect(events[1]!.attributes).toMatchObject({ kernelCacheLocal: true });
    expect((await fake.tools.calls()).some((c) => c[5] === "content" && c[6] === "fetch")).toBe(
      false,
    );
    expect(await readTree(cacheDir())).toEqual({ "triton/here.cubin": "compiled on this host" });
  });

  it("captures the directory as a single-layer OCI image: pack, import, label, push", async () => {
    await setup();
    const ref = `${STORE}:${deploymentId}-a10g-535`;
    const req = request({ kernelCache: { capture: { kernelCacheId, ref } } });
    await fake.runtime.startReplica(req, () => undefined);
    await writeFiles(cacheDir(), CACHE_FILES);
    await fake.tools.forgetCalls();

    const captured = await fake.runtime.captureKernelCache(
      req.replicaId,
      req,
      req.kernelCache!.capture!,
    );
    // prettier-ignore
    expect(await fake.actions()).toEqual([
      ["ctr", ...G, "images", "import", "--no-unpack", "--all-platforms", "-"],
      ["ctr", ...G, "images", "label", ref, `thaw.kernel-cache-id=${kernelCacheId}`],
      ["ctr", ...G, "images", "push", "--plain-http", ref],
      ["ctr", ...G, "images", "rm", ref],
    ]);
    // What was imported: an OCI image layout whose index names the capture's tag.
    const state = fake.tools.env.FAKE_STATE!;
    const layout = path.join(state, "imported");
    const index = JSON.parse(await readFile(path.join(layout, "index.json"), "utf8")) as {
      manifests: { digest: string; annotations: Record<string, string> }[];
    };
    expect(index.manifests).toHaveLength(1);
    expect(index.manifests[0]!.annotations).toEqual({ "io.containerd.image.name": ref });
    const blob = (d: string) => readFile(path.join(layout, "blobs", "sha256", d.slice(7)));
    const manifestBytes = await blob(index.manifests[0]!.digest);
    expect(sha256(manifestBytes)).toBe(index.manifests[0]!.digest);
    const manifest = JSON.parse(manifestBytes.toString("utf8")) as {
      config: { mediaType: string; digest: string };
      layers: { mediaType: string; digest: string; size: number }[];
    };
    expect(manifest.config.mediaType).toBe(KERNEL_CACHE_MEDIA.config);
    expect(manifest.layers).toHaveLength(1);
    const [layer] = manifest.layers;
    expect(layer!.mediaType).toBe("application/vnd.oci.image.layer.v1.tar");
    const layerBytes = await blob(layer!.digest);
    expect(sha256(layerBytes)).toBe(layer!.digest);
    expect(layerBytes.length).toBe(layer!.size);
    const config = JSON.parse((await blob(manifest.config.digest)).toString("utf8")) as {
      rootfs: { diff_ids: string[] };
    };
    expect(config.rootfs.diff_ids).toEqual([layer!.digest]);
    // The layer holds the directory's files, relative to it.
    const out = await mkdtemp(path.join(os.tmpdir(), "thaw-cache-out-"));
    execFileSync("tar", ["--extract", "--directory", out], { input: layerBytes });
    expect(await readTree(out)).toEqual(CACHE_FILES);
    // The digest the image was imported (and pushed) under, and the layer's size.
    expect(captured).toEqual({ digest: index.manifests[0]!.digest, bytes: layer!.size });
    // Its work files were beside the caches, and are gone.
    expect(await readdir(fake.runtime.host.config.kernelCacheDir)).toEqual([deploymentId]);
  });

  it("refuses to capture a directory with no files in it", async () => {
    await setup();
    const ref = `${STORE}:${deploymentId}-a10g-535`;
    const req = request({ kernelCache: { capture: { kernelCacheId, ref } } });
    await fake.runtime.startReplica(req, () => undefined);
    // An engine that gave up early leaves its empty cache roots behind.
    await mkdir(path.join(cacheDir(), "vllm", "torch_compile_cache"), { recursive: true });
    await fake.tools.forgetCalls();
    await expect(
      fake.runtime.captureKernelCache(req.replicaId, req, req.kernelCache!.capture!),
    ).rejects.toThrow(
      `the kernel-cache directory ${cacheDir()} holds no files: nothing to capture`,
    );
    expect(await fake.actions()).toEqual([]);
    const parsed = StartReplicaRequest.parse(request());
    delete parsed.deployment.deploymentId;
    await expect(
      fake.runtime.captureKernelCache(parsed.replicaId, parsed, { kernelCacheId, ref }),
    ).rejects.toThrow(/no deployment id/);
  });

  it("reports a failed push with the tool's words, and removes its work files", async () => {
    await setup();
    const ref = `${STORE}:${deploymentId}-a10g-535`;
    const req = request({ kernelCache: { capture: { kernelCacheId, ref } } });
    await fake.runtime.startReplica(req, () => undefined);
    await writeFiles(cacheDir(), CACHE_FILES);
    await fake.tools.failWhen("ctr", "images push", "ctr: unexpected status: 401 Unauthorized");
    await expect(
      fake.runtime.captureKernelCache(req.replicaId, req, req.kernelCache!.capture!),
    ).rejects.toThrow(/push the kernel cache to the store.*401 Unauthorized/s);
    expect(await readdir(fake.runtime.host.config.kernelCacheDir)).toEqual([deploymentId]);
    expect((await fake.actions()).at(-1)).toEqual(["ctr", ...G, "images", "rm", ref]);
  });
});
