import { createHash, randomBytes, randomUUID } from "node:crypto";
import { type RegistryAuth } from "@thaw/protocol";
import { z } from "zod";
import { hostPlatform, registryHost } from "../image-blobs.ts";
import { repositoryOf } from "../registry-auth.ts";
import { type ContainerdApi, ContainerdApiError, type Descriptor } from "./containerd-api.ts";
import { type HttpGet } from "./http-get.ts";
import { RegistryClient } from "./registry-client.ts";

// The pull path's pull, done by the agent itself over containerd's API (issue 22, part 4) instead
// of a `ctr images pull` process. It does what containerd 1.6's client does for that command
// (pull.go, unpacker.go, images/handlers.go), step for step, so that the result is the same
// image containerd would hold after ctr: the blobs in the content store with the GC labels
// that tie them to their parents, each layer unpacked into the snapshotter under its chain ID,
// the config labelled with the top snapshot, and an image record. Everything is written under a
// lease that expires on its own, so a pull that dies halfway leaves nothing held for long and
// nothing half-referenced: the image record is written last.

const INDEX_TYPES = new Set([
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
]);

const Platform = z.object({ os: z.string(), architecture: z.string() }).partial();
const Desc = z.object({
  mediaType: z.string(),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  size: z.number().int().min(0),
  platform: Platform.optional(),
});
const Index = z.object({ manifests: z.array(Desc) });
const Manifest = z.object({ config: Desc, layers: z.array(Desc) });
const Config = z.object({ rootfs: z.object({ diff_ids: z.array(z.string()) }) });

export interface ApiPullResult {
  /** What the image record points at: the index, or the manifest of a single-platform image. */
  root: Descriptor;
  /** Every blob of the image for this platform (index, manifest, config, layers). */
  blobs: { digest: string; size: number }[];
  /** The blobs this pull wrote: zero when the node already held the image. */
  fetchedBytes: number;
  layers: number;
  /** Until every blob was in the content store (unpacking overlaps it, as in containerd). */
  fetchSeconds: number;
  /** Time spent applying layers into the snapshotter. */
  unpackSeconds: number;
  /** Strings to redact from a failure's report (the credential's forms, tokens). */
  secrets: string[];
}

export interface ApiPullOptions {
  plainHttp: boolean;
  credential?: RegistryAuth;
  snapshotter?: string;
  signal?: AbortSignal;
  /** Layers fetched at once (containerd's default max concurrent downloads). */
  concurrency?: number;
  /** How long the pull's lease holds its blobs if the agent dies mid-pull. */
  leaseSeconds?: number;
  /** How registries are reached (unit tests: a scripted registry). */
  get?: HttpGet;
}

/** containerd's chain IDs (identity.ChainIDs of the OCI image spec) of a layer stack. */
export function chainIds(diffIds: readonly string[]): string[] {
  const chain: string[] = [];
  for (const diffId of diffIds) {
    const parent = chain.at(-1);
    chain.push(
      parent
        ? `sha256:${createHash("sha256").update(`${parent} ${diffId}`).digest("hex")}`
        : diffId,
    );
  }
  return chain;
}

/** The tag or digest a reference names ("latest" when it names neither). */
export function referenceTarget(ref: string): string {
  const at = ref.indexOf("@");
  if (at >= 0) return ref.slice(at + 1);
  const slash = ref.lastIndexOf("/");
  const colon = ref.lastIndexOf(":");
  return colon > slash ? ref.slice(colon + 1) : "latest";
}

/** The child manifest of an index for this host's platform. */
export function platformManifest(
  index: z.infer<typeof Index>,
  platform = hostPlatform(),
): z.infer<typeof Desc> | undefined {
  return index.manifests.find(
    (m) => m.platform?.os === platform.os && m.platform.architecture === platform.architecture,
  );
}

function parseJson<T>(schema: z.ZodType<T>, bytes: Buffer, what: string): T {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new Error(`${what} is not JSON`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new Error(`${what} is not a valid image ${what.split(" ")[0]}`);
  return parsed.data;
}

const toDescriptor = (d: { mediaType: string; digest: string; size: number }): Descriptor => ({
  media_type: d.mediaType,
  digest: d.digest,
  size: d.size,
});

export async function pullImage(
  api: ContainerdApi,
  ref: string,
  o: ApiPullOptions,
): Promise<ApiPullResult> {
  const snapshotter = o.snapshotter ?? "overlayfs";
  const registry = new RegistryClient({
    registry: registryHost(ref),
    repository: repositoryOf(ref),
    plainHttp: o.plainHttp,
    ...(o.credential ? { credential: o.credential } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.get ? { get: o.get } : {}),
  });
  const lease = `thaw-pull-${randomUUID()}`;
  const call = { lease, ...(o.signal ? { signal: o.signal } : {}) };
  const t0 = performance.now();
  let fetchedBytes = 0;

  /** Writes a blob the store lacks (from `bytes`, or streamed from the registry). */
  const store = async (
    desc: z.infer<typeof Desc>,
    labels: Record<string, string>,
    bytes?: Buffer,
  ): Promise<void> => {
    const held = await api.contentInfo(desc.digest, call);
    if (held) {
      // Held already (an earlier pull): its labels are set here as ctr sets them.
      if (Object.keys(labels).length) await api.labelContent(desc.digest, labels, call);
      return;
    }
    const blob = bytes ? undefined : await registry.blob(desc.digest);
    try {
      await api.writeContent(
        `${lease}-${desc.digest}`,
        { digest: desc.digest, size: desc.size },
        bytes ? [bytes] : blob!.body,
        labels,
        call,
      );
    } finally {
      blob?.discard();
    }
    fetchedBytes += desc.size;
  };

  await api.createLease(lease, o.leaseSeconds ?? 3_600, call);
  try {
    const root = await registry.manifest(referenceTarget(ref));
    let manifestDesc: z.infer<typeof Desc> = { ...root };
    let manifestBytes = root.bytes;
    let index: z.infer<typeof Index> | undefined;
    if (INDEX_TYPES.has(root.mediaType)) {
      index = parseJson(Index, root.bytes, `index ${root.digest}`);
      const platform = hostPlatform();
      const match = platformManifest(index);
      if (!match) {
        throw new Error(`image ${ref} has no manifest for ${platform.os}/${platform.architecture}`);
      }
      const child = await registry.manifest(match.digest);
      manifestDesc = match;
      manifestBytes = child.bytes;
    }
    const manifest = parseJson(Manifest, manifestBytes, `manifest ${manifestDesc.digest}`);

    // The config first: its diff IDs name the snapshots the layers unpack into.
    const configBytes =
      (await api.contentInfo(manifest.config.digest, call)) !== undefined
        ? await api.readContent(manifest.config.digest, call)
        : undefined;
    const config =
      configBytes ?? (await readBody((await registry.blob(manifest.config.digest)).body));
    const diffIds = parseJson(Config, config, `config ${manifest.config.digest}`).rootfs.diff_ids;
    if (diffIds.length !== manifest.layers.length) {
      throw new Error(
        `image ${ref}: its config lists ${diffIds.length} layers, its manifest ${manifest.layers.length}`,
      );
    }
    const chain = chainIds(diffIds);

    // Layers are fetched a few at a time and unpacked in order as each arrives.
    const abort = new AbortController();
    const concurrency = Math.max(1, o.concurrency ?? 3);
    let next = 0;
    const fetched = manifest.layers.map(() => deferred());
    const worker = async () => {
      while (next < manifest.layers.length && !abort.signal.aborted) {
        const i = next++;
        try {
          await store(manifest.layers[i]!, {});
          fetched[i]!.resolve();
        } catch (error) {
          abort.abort();
          fetched[i]!.reject(error);
          for (const rest of fetched.slice(i + 1)) rest.reject(error);
          return;
        }
      }
    };
    const workers = Array.from({ length: Math.min(concurrency, manifest.layers.length) }, worker);
    let fetchEnd = performance.now();
    const allFetched = Promise.all(fetched.map((f) => f.promise)).then(() => {
      fetchEnd = performance.now();
    });
    allFetched.catch(() => undefined);

    let unpackSeconds = 0;
    try {
      for (const [i, layer] of manifest.layers.entries()) {
        const chainId = chain[i]!;
        await fetched[i]!.promise;
        if (await api.snapshotExists(snapshotter, chainId, call)) continue;
        const u0 = performance.now();
        const labels = { "containerd.io/snapshot.ref": chainId };
        const key = `extract-${randomBytes(6).toString("hex")} ${chainId}`;
        const mounts = await api.prepareSnapshot(
          snapshotter,
          key,
          chain[i - 1] ?? "",
          labels,
          call,
        );
        let applied: string;
        try {
          applied = (await api.applyLayer(toDescriptor(layer), mounts, call)).digest;
          if (applied !== diffIds[i]) {
            throw new Error(
              `layer ${layer.digest} unpacked to ${applied}, its config says ${diffIds[i]}`,
            );
          }
          await api
            .commitSnapshot(snapshotter, chainId, key, labels, call)
            .catch((error: unknown) => {
              // Another pull of the same image committed it first: the snapshot is there.
              if (!(error instanceof ContainerdApiError && error.alreadyExists)) throw error;
            });
        } catch (error) {
          await api.removeSnapshot(snapshotter, key, call).catch(() => undefined);
          throw error;
        }
        await api.labelContent(layer.digest, { "containerd.io/uncompressed": applied }, call);
        unpackSeconds += (performance.now() - u0) / 1000;
      }
    } finally {
      abort.abort();
      await Promise.allSettled(workers);
    }
    await allFetched;

    // Parents after children, with the labels containerd's GC follows from parent to child.
    await store(
      manifest.config,
      {
        ...(chain.length
          ? { [`containerd.io/gc.ref.snapshot.${snapshotter}`]: chain.at(-1)! }
          : {}),
      },
      config,
    );
    await store(
      { ...manifestDesc },
      Object.fromEntries<string>([
        ["containerd.io/gc.ref.content.config", manifest.config.digest],
        ...manifest.layers.map((l, i): [string, string] => [
          `containerd.io/gc.ref.content.l.${i}`,
          l.digest,
        ]),
      ]),
      manifestBytes,
    );
    if (index) {
      await store(
        { mediaType: root.mediaType, digest: root.digest, size: root.size },
        { "containerd.io/gc.ref.content.m.0": manifestDesc.digest },
        root.bytes,
      );
    }
    const rootDesc: Descriptor = {
      media_type: root.mediaType,
      digest: root.digest,
      size: root.size,
    };
    await api.putImage(ref, rootDesc, call);

    const blobs = [
      ...(index ? [{ digest: root.digest, size: root.size }] : []),
      { digest: manifestDesc.digest, size: manifestBytes.length },
      { digest: manifest.config.digest, size: manifest.config.size },
      ...manifest.layers.map((l) => ({ digest: l.digest, size: l.size })),
    ];
    return {
      root: rootDesc,
      blobs,
      fetchedBytes,
      layers: manifest.layers.length,
      fetchSeconds: (fetchEnd - t0) / 1000,
      unpackSeconds,
      secrets: registry.secrets,
    };
  } finally {
    await api.deleteLease(lease).catch(() => undefined);
  }
}

async function readBody(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function deferred(): {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
} {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}
