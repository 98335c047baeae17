import { z } from "zod";

// Walks an image's index/manifest in containerd's content store to list the blobs a pull
// moves, with their exact sizes: the bytes of the pull phase, and the layers to look up in
// the stargz snapshotter's metrics.

const Descriptor = z.object({
  digest: z.string(),
  size: z.number().int().min(0),
  platform: z.object({ os: z.string(), architecture: z.string() }).partial().optional(),
});
const IndexOrManifest = z.object({
  manifests: z.array(Descriptor).optional(),
  config: Descriptor.optional(),
  layers: z.array(Descriptor).optional(),
});

export interface ImageBlobs {
  /** Every blob of the image for this platform (index, manifest, config, layers). */
  blobs: { digest: string; size: number }[];
  layerDigests: string[];
  totalBytes: number;
}

export function hostPlatform(): { os: string; architecture: string } {
  const architecture = {
    x64: "amd64",
    arm64: "arm64",
    arm: "arm",
    ppc64: "ppc64le",
    s390x: "s390x",
  }[process.arch as string];
  return { os: "linux", architecture: architecture ?? process.arch };
}

export async function imageBlobs(
  getContent: (digest: string) => Promise<string>,
  rootDigest: string,
  platform = hostPlatform(),
): Promise<ImageBlobs> {
  const blobs: { digest: string; size: number }[] = [];
  let digest = rootDigest;
  for (let depth = 0; depth < 4; depth++) {
    const text = await getContent(digest);
    blobs.push({ digest, size: Buffer.byteLength(text, "utf8") });
    const parsed = IndexOrManifest.parse(JSON.parse(text));
    if (parsed.manifests) {
      const match = parsed.manifests.find(
        (m) => m.platform?.os === platform.os && m.platform.architecture === platform.architecture,
      );
      if (!match) {
        throw new Error(
          `image ${rootDigest} has no manifest for ${platform.os}/${platform.architecture}`,
        );
      }
      digest = match.digest;
      continue;
    }
    const layers = parsed.layers ?? [];
    if (parsed.config) blobs.push({ digest: parsed.config.digest, size: parsed.config.size });
    blobs.push(...layers.map((l) => ({ digest: l.digest, size: l.size })));
    return {
      blobs,
      layerDigests: layers.map((l) => l.digest),
      totalBytes: blobs.reduce((sum, b) => sum + b.size, 0),
    };
  }
  throw new Error(`image ${rootDigest}: index nesting too deep`);
}

/** `<name>@<digest>` for a pinned pull: the tag, if any, is dropped (the digest decides). */
export function pinnedReference(imageRef: string, digest: string | undefined): string {
  if (!digest) return imageRef;
  const withoutDigest = imageRef.split("@")[0] ?? imageRef;
  const lastSlash = withoutDigest.lastIndexOf("/");
  const lastColon = withoutDigest.lastIndexOf(":");
  const name = lastColon > lastSlash ? withoutDigest.slice(0, lastColon) : withoutDigest;
  return `${name}@${digest}`;
}

/** The registry host of a reference ("127.0.0.1:5000/a/b:t" → "127.0.0.1:5000"). */
export function registryHost(ref: string): string {
  const first = ref.split("/")[0] ?? "";
  return ref.includes("/") && (first.includes(".") || first.includes(":") || first === "localhost")
    ? first
    : "docker.io";
}

const NESTED_MEDIA_TYPES = new Set([
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
  "application/vnd.docker.distribution.manifest.v2+json",
]);
const AnyDescriptor = z.object({
  mediaType: z.string().optional(),
  digest: z.string(),
  size: z.number().int().min(0),
  platform: z.object({ os: z.string(), architecture: z.string() }).partial().optional(),
});
const AnyIndex = z.object({
  manifests: z.array(AnyDescriptor).optional(),
  config: AnyDescriptor.optional(),
  layers: z.array(AnyDescriptor).optional(),
});

/**
 * Every blob an image (or a containerd checkpoint image, whose index lists checkpoint, spec
 * and rw-layer blobs) references for this platform, read from the local content store.
 * Manifests for other platforms, and manifests the store does not hold, are not descended into.
 */
export async function referencedBlobs(
  getContent: (digest: string) => Promise<string>,
  rootDigest: string,
  platform = hostPlatform(),
): Promise<{ digest: string; size: number }[]> {
  const found = new Map<string, number>();
  const visit = async (digest: string, depth: number): Promise<void> => {
    let text: string;
    try {
      text = await getContent(digest);
    } catch {
      return;
    }
    found.set(digest, Buffer.byteLength(text, "utf8"));
    const parsed = AnyIndex.safeParse(JSON.parse(text));
    if (!parsed.success || depth > 4) return;
    const children = [
      ...(parsed.data.manifests ?? []),
      ...(parsed.data.config ? [parsed.data.config] : []),
      ...(parsed.data.layers ?? []),
    ];
    for (const child of children) {
      const matches =
        !child.platform ||
        (child.platform.os === platform.os &&
          child.platform.architecture === platform.architecture);
      if (child.mediaType && NESTED_MEDIA_TYPES.has(child.mediaType)) {
        if (matches) await visit(child.digest, depth + 1);
      } else {
        found.set(child.digest, child.size);
      }
    }
  };
  await visit(rootDigest, 0);
  return [...found].map(([digest, size]) => ({ digest, size }));
}
