import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { type StartReplicaRequest, Sha256Digest } from "@thaw/protocol";
import { z } from "zod";
import {
  type CapturedKernelCache,
  type KernelCacheCapture,
  type PhaseAttributes,
} from "../runtime.ts";
import { type ContainerSpec, LABEL_KERNEL_CACHE } from "./commands.ts";
import { type ContainerdHost } from "./host.ts";
import { type StartContext } from "./start-context.ts";

// The kernel-cache store on a containerd host. Every container a start of a deployment makes
// (pull, lazy, peer; and the container a restore rebuilds, which must equal the one captured)
// mounts the deployment's own directory on this host, <kernelCacheDir>/<deploymentId>, at
// /thaw/kernel-cache, with the engines' cache variables pointed into it: what one engine
// compiles the next start of the deployment here finds, store or no store. With the start's
// `kernelCache.fetch` the directory is first filled from the operator's store (one OCI
// artifact, a single uncompressed tar layer, by the digest its capture recorded); with
// `kernelCache.capture` it is packed as such an artifact once the replica is ready and pushed
// to the tag it was given (the lifecycle reports the digest). The cache only accelerates: a
// failed fetch leaves the engine to compile, a failed capture leaves a later start to capture.

export const KERNEL_CACHE_MOUNT = "/thaw/kernel-cache";

/**
 * Where the engines keep what they compile, all under the mount. vLLM keeps torch.compile's
 * artifacts, with Inductor's and Triton's caches inside, under VLLM_CACHE_ROOT; the others are
 * the JIT caches a vLLM engine or its kernels use beside it. A deployment's own `env` wins.
 */
export const KERNEL_CACHE_ENV: Readonly<Record<string, string>> = {
  VLLM_CACHE_ROOT: `${KERNEL_CACHE_MOUNT}/vllm`,
  TRITON_CACHE_DIR: `${KERNEL_CACHE_MOUNT}/triton`,
  TORCHINDUCTOR_CACHE_DIR: `${KERNEL_CACHE_MOUNT}/inductor`,
  FLASHINFER_WORKSPACE_BASE: `${KERNEL_CACHE_MOUNT}/flashinfer`,
  DG_JIT_CACHE_DIR: `${KERNEL_CACHE_MOUNT}/deep_gemm`,
};

/** OCI media types of the artifact (image-spec v1.1: a plain image manifest). */
export const KERNEL_CACHE_MEDIA = {
  index: "application/vnd.oci.image.index.v1+json",
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  /** Uncompressed: nothing to inflate on the way in, so the fetch is one stream to disk. */
  layer: "application/vnd.oci.image.layer.v1.tar",
} as const;

/** The deployment's cache directory on this host; none for a start without a deployment id. */
export function kernelCacheDirFor(
  host: ContainerdHost,
  request: StartReplicaRequest,
): string | undefined {
  const id = request.deployment.deploymentId;
  return id === undefined ? undefined : path.join(host.config.kernelCacheDir, id);
}

/** Creates the deployment's cache directory (0700) if the start has one; returns it. */
export async function ensureKernelCacheDir(
  host: ContainerdHost,
  request: StartReplicaRequest,
): Promise<string | undefined> {
  const dir = kernelCacheDirFor(host, request);
  if (dir) await mkdir(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** The spec with the deployment's cache directory mounted and the engines pointed into it. */
export function withKernelCache(spec: ContainerSpec, dir: string | undefined): ContainerSpec {
  if (!dir) return spec;
  return {
    ...spec,
    env: { ...KERNEL_CACHE_ENV, ...spec.env },
    mounts: [...(spec.mounts ?? []), { source: dir, destination: KERNEL_CACHE_MOUNT }],
  };
}

const Manifest = z.object({
  layers: z.array(
    z.object({ mediaType: z.string(), digest: Sha256Digest, size: z.number().int().min(0) }),
  ),
});

/**
 * pull and lazy, before the container is created: fills the deployment's (empty) cache
 * directory from the store when the start says to fetch. Returns what the `create` phase
 * should note about it.
 *
 * How it is reported: a `fetch_kernel_cache` phase (bytes: the layer's) only when the cache was
 * installed, so that the phase always means "this engine started with the stored cache" (the
 * control plane's hints read it so). A failed fetch logs a warning, emits no phase, and the
 * start goes on with a cold directory; the time it took and why it failed are attributes of
 * the `create` phase that follows (kernelCacheFetch: "failed", kernelCacheFetchSeconds,
 * kernelCacheFetchError). A directory that already holds files (this host kept the
 * deployment's caches from an earlier start, as good for this GPU and driver) is not fetched
 * into, as the model has it: `create` notes kernelCacheLocal.
 */
export async function fetchStoredKernelCache(ctx: StartContext): Promise<PhaseAttributes> {
  const { host, request, rec, signal } = ctx;
  const fetch = request.kernelCache?.fetch;
  const dir = kernelCacheDirFor(host, request);
  if (!fetch || !dir) return {};
  if (await containsFile(dir)) return { kernelCacheLocal: true };
  const opts = signal ? { signal } : {};
  const t0 = performance.now();
  try {
    await rec.run("fetch_kernel_cache", async (scope) => {
      scope.attributes.kernelCacheId = fetch.kernelCacheId;
      scope.attributes.ref = fetch.ref;
      const fetched = await host.run(
        host.ctr.kernelCacheFetch(fetch.ref, fetch.kernelCacheId, {
          plainHttp: host.plainHttp(fetch.ref),
        }),
        "fetch the kernel cache from the store",
        {
          timeout: "kernelCacheFetchSeconds",
          ...opts,
          hint: "Check that the node reaches the operator's store (THAW_SNAPSHOT_REGISTRY) and that a store on plain HTTP is listed in plainHttpRegistries",
        },
      );
      scope.attributes.fetchSeconds = fetched.seconds;
      const layer = await singleLayer(host, fetch.ref, signal);
      const t1 = performance.now();
      await installLayer(ctx, layer.digest, dir);
      scope.attributes.unpackSeconds = (performance.now() - t1) / 1000;
      scope.bytes = layer.size;
    });
    return {};
  } catch (error) {
    // A cancelled start stops here like any other; only the cache's own failure is forgiven.
    if (signal?.aborted) throw error;
    const reason = (error instanceof Error ? error.message : String(error)).slice(0, 1_000);
    host.config.log.warn(
      {
        replicaId: request.replicaId,
        coldStartId: request.coldStartId,
        kernelCacheId: fetch.kernelCacheId,
        ref: fetch.ref,
        error: reason,
      },
      "kernel-cache fetch failed; the engine starts with a cold cache directory",
    );
    return {
      kernelCacheFetch: "failed",
      kernelCacheFetchSeconds: (performance.now() - t0) / 1000,
      kernelCacheFetchError: reason,
    };
  } finally {
    // The cache lives in its directory now (or not at all): the image record would only keep
    // a second copy of it, and list it as an image this node holds.
    await host
      .run(host.ctr.imageRemove(fetch.ref), "forget the fetched kernel cache's image record")
      .catch(() => undefined);
  }
}

/** The artifact's one layer (an uncompressed tar), as its manifest, by the ref's digest, names it. */
async function singleLayer(
  host: ContainerdHost,
  ref: string,
  signal: AbortSignal | undefined,
): Promise<{ digest: string; size: number }> {
  const digest = ref.slice(ref.indexOf("@") + 1);
  const { stdout } = await host.run(
    host.ctr.contentGet(digest),
    "read the kernel cache's manifest",
    signal ? { signal } : {},
  );
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    parsed = undefined;
  }
  const manifest = Manifest.safeParse(parsed);
  const layers = manifest.success ? manifest.data.layers : [];
  const layer = layers[0];
  if (layers.length !== 1 || layer?.mediaType !== KERNEL_CACHE_MEDIA.layer) {
    throw new Error(
      `${ref} is not a kernel cache: expected one manifest with a single ${KERNEL_CACHE_MEDIA.layer} layer`,
    );
  }
  return layer;
}

/**
 * The layer unpacked beside the directory, then renamed onto it: a fetch that fails half-way
 * leaves no half-written kernels for the engine to load. If the directory filled meanwhile (a
 * start of the same deployment here compiled first), that one is kept.
 */
async function installLayer(ctx: StartContext, layerDigest: string, dir: string): Promise<void> {
  const { host, request, signal } = ctx;
  const staging = await mkdtemp(
    path.join(host.config.kernelCacheDir, `.fetch-${request.deployment.deploymentId}-`),
  );
  try {
    await host.runPipe(
      { command: host.ctr.contentGet(layerDigest), what: "read the kernel cache's layer" },
      { command: host.tar.extractInto(staging), what: "unpack the kernel cache" },
      { timeout: "kernelCacheFetchSeconds", ...(signal ? { signal } : {}) },
    );
    // rename(2) replaces an empty directory atomically, and refuses one that holds anything.
    await rename(staging, dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOTEMPTY" && error.code !== "EEXIST") throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Packs the deployment's cache directory as a single-layer OCI image (uncompressed tar layer,
 * minimal config, OCI manifest, built as an image-layout tar), imports it into containerd under
 * the capture's tag (`ctr images import`), pushes it to the store and answers the pushed
 * manifest's digest and the layer's size. Refuses a directory with no files in it.
 */
export async function packAndPushKernelCache(
  host: ContainerdHost,
  request: StartReplicaRequest,
  capture: KernelCacheCapture,
  signal: AbortSignal | undefined,
): Promise<CapturedKernelCache> {
  const dir = kernelCacheDirFor(host, request);
  if (!dir) {
    throw new Error(
      "the start had no deployment id, so its engine had no kernel-cache directory to capture",
    );
  }
  if (!(await containsFile(dir))) {
    throw new Error(
      `the kernel-cache directory ${dir} holds no files: nothing to capture (an engine that ignores VLLM_CACHE_ROOT and the JIT cache variables keeps its caches elsewhere)`,
    );
  }
  const opts = signal ? { signal } : {};
  await mkdir(host.config.kernelCacheDir, { recursive: true, mode: 0o700 });
  // Beside the caches, not in the OS temp dir (often a small tmpfs): the layer is the cache's size.
  const work = await mkdtemp(path.join(host.config.kernelCacheDir, ".capture-"));
  try {
    const layout = path.join(work, "layout");
    const blobs = path.join(layout, "blobs", "sha256");
    await mkdir(blobs, { recursive: true });
    const layerFile = path.join(work, "layer.tar");
    await host.run(host.tar.packDirectory(dir, layerFile), "pack the kernel-cache directory", {
      timeout: "pushSeconds",
      ...opts,
    });
    const layer = await digestOfFile(layerFile);
    await rename(layerFile, path.join(blobs, layer.digest.slice("sha256:".length)));
    const writeBlob = async (json: unknown) => {
      const bytes = Buffer.from(JSON.stringify(json));
      const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
      await writeFile(path.join(blobs, digest.slice("sha256:".length)), bytes);
      return { digest, size: bytes.length };
    };
    const config = await writeBlob({
      architecture: OCI_ARCH[process.arch] ?? process.arch,
      os: "linux",
      rootfs: { type: "layers", diff_ids: [layer.digest] },
    });
    const manifest = await writeBlob({
      schemaVersion: 2,
      mediaType: KERNEL_CACHE_MEDIA.manifest,
      config: { mediaType: KERNEL_CACHE_MEDIA.config, ...config },
      layers: [{ mediaType: KERNEL_CACHE_MEDIA.layer, ...layer }],
      annotations: { [LABEL_KERNEL_CACHE]: capture.kernelCacheId },
    });
    await writeFile(
      path.join(layout, "oci-layout"),
      JSON.stringify({ imageLayoutVersion: "1.0.0" }),
    );
    await writeFile(
      path.join(layout, "index.json"),
      JSON.stringify({
        schemaVersion: 2,
        mediaType: KERNEL_CACHE_MEDIA.index,
        manifests: [
          {
            mediaType: KERNEL_CACHE_MEDIA.manifest,
            ...manifest,
            // containerd names the imported image by it.
            annotations: { "io.containerd.image.name": capture.ref },
          },
        ],
      }),
    );
    await host.runPipe(
      { command: host.tar.streamLayout(layout), what: "stream the kernel cache's image layout" },
      { command: host.ctr.imageImportFromStdin(), what: "import the kernel cache into containerd" },
      { timeout: "pushSeconds", ...opts },
    );
    await host.run(
      host.ctr.imageLabel(capture.ref, LABEL_KERNEL_CACHE, capture.kernelCacheId),
      "label the kernel cache's image record",
      opts,
    );
    await host.run(
      host.ctr.imagePush(capture.ref, { plainHttp: host.plainHttp(capture.ref) }),
      "push the kernel cache to the store",
      {
        timeout: "pushSeconds",
        ...opts,
        hint: "Check that the node may push to the operator's store (THAW_SNAPSHOT_REGISTRY) and that a store on plain HTTP is listed in plainHttpRegistries",
      },
    );
    // The manifest's digest as imported (a push sends it unchanged): later fetches are by it.
    const digest = await host.imageDigest(capture.ref, signal);
    return { digest, bytes: layer.size };
  } finally {
    await rm(work, { recursive: true, force: true });
    await host
      .run(host.ctr.imageRemove(capture.ref), "forget the captured kernel cache's image record")
      .catch(() => undefined);
  }
}

/** Node's process.arch → the OCI config's `architecture`. */
const OCI_ARCH: Partial<Record<string, string>> = { x64: "amd64", arm64: "arm64" };

async function digestOfFile(file: string): Promise<{ digest: string; size: number }> {
  const hash = createHash("sha256");
  let size = 0;
  await pipeline(createReadStream(file), async (chunks: AsyncIterable<Buffer>) => {
    for await (const chunk of chunks) {
      hash.update(chunk);
      size += chunk.length;
    }
  });
  return { digest: `sha256:${hash.digest("hex")}`, size };
}

/** Whether `dir` holds a file anywhere below it (an engine leaves empty directories early). */
export async function containsFile(dir: string): Promise<boolean> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw error;
  }
  for (const entry of entries) {
    if (!entry.isDirectory()) return true;
  }
  for (const entry of entries) {
    if (await containsFile(path.join(dir, entry.name))) return true;
  }
  return false;
}
