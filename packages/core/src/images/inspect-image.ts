import { createHash } from "node:crypto";
import type { ScenarioLayer } from "@thaw/protocol";
import { AppError } from "../errors/index.ts";
import { PHYSICS } from "../cold-start-model/physical-constants.ts";
import { FetchRefusedError, type PublicResponse } from "../net/public-fetch.ts";
import { parseImageReference, withTag, type ImageReference } from "./image-reference.ts";
import {
  ESTARGZ_TOC_DIGEST,
  ESTARGZ_UNCOMPRESSED_SIZE,
  GZIP_HEADER_BYTES,
  GZIP_TRAILER_BYTES,
  gzipLevelOf,
  gzipUncompressedBytes,
  layerContentOf,
  layerEncodingOf,
  readGzipIsize,
  ZSTD_HEADER_BYTES,
  zstdFrameContentSize,
} from "./layer-facts.ts";
import {
  RegistryAnswerError,
  RegistrySession,
  type RegistryCredentials,
  type RegistryHttp,
} from "./registry-session.ts";

// What a registry says an image is, so a user gives an image reference and Thaw finds the
// rest (issue 19): the manifest (through an index to this fleet's platform), its digest, each
// layer's compressed and uncompressed size and compression, and an eStargz variant if the
// repository has one. Reads a few bytes of each layer, never a layer.

const INDEX_TYPES = [
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
];
const MANIFEST_TYPES = [
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.v2+json",
];
const ACCEPT = [...INDEX_TYPES, ...MANIFEST_TYPES].join(", ");
const MANIFEST_MAX_BYTES = 4 * 1024 * 1024;
/** A deployment's layer list holds at most this many (DeploymentSpec.imageLayers). */
const MAX_LAYERS = 128;
const MAX_IMAGE_BYTES = 1_000_000_000_000;
/** Byte-range reads in flight per inspection: enough to hide round trips, polite to registries. */
const RANGE_READS_IN_FLIGHT = 4;

export interface InspectImageConfig {
  http: RegistryHttp;
  /** The org's stored credential for a registry (`docker.io`, `ghcr.io`, `host:port`), if any. */
  credentialsFor: (registry: string) => Promise<RegistryCredentials | null>;
  /** Registries the operator trusts although private; they may answer over plain http. */
  trustedRegistries: ReadonlySet<string>;
  /** The fleet's platform; GPU hosts are linux/amd64. */
  platform?: { os: string; architecture: string };
  /** The tag suffix of a repository's eStargz variant (`v1` → `v1-esgz`). */
  estargzTagSuffix?: string;
}

export interface InspectedLayer {
  digest: string;
  mediaType: string;
  compressedBytes: number;
  /** Uncompressed: what lands on disk. */
  bytes: number;
  compression: ScenarioLayer["compression"];
  content: ScenarioLayer["content"];
  /** True when the uncompressed size is the cold-start model's ratio, not read from the layer. */
  estimated: boolean;
}

export interface EstargzVariant {
  ref: string;
  digest: string;
}

export interface ImageInspection {
  ref: string;
  registry: string;
  repository: string;
  /** What the reference resolves to (an index's digest when it names one): what nodes hold. */
  digest: string;
  /** The platform manifest's digest, when the reference names an index. */
  platformDigest: string | null;
  platform: string | null;
  layers: InspectedLayer[];
  compressedBytes: number;
  imageBytes: number;
  estargz: EstargzVariant | null;
  /** What the inspection noticed and did not use, for the person deploying. */
  notes: string[];
}

interface Descriptor {
  mediaType?: string;
  digest?: string;
  size?: number;
  annotations?: Record<string, string>;
  platform?: { os?: string; architecture?: string; variant?: string };
}

interface ResolvedManifest {
  digest: string;
  platformDigest: string | null;
  platform: string | null;
  layers: Descriptor[];
}

export async function inspectImage({
  ref: text,
  field,
  config,
}: {
  ref: string;
  /** The input field that named the image, for error messages (e.g. `body.imageRef`). */
  field: string;
  config: InspectImageConfig;
}): Promise<ImageInspection> {
  const ref = parseImageReference(text);
  if (!ref) throw new AppError("BAD_REQUEST", `${field}: not an image reference`, { field });
  const fail = (message: string) =>
    new AppError("UNPROCESSABLE", `${field}: ${message}`, { field });
  try {
    const baseUrl = await registryBaseUrl(ref, config);
    const session = new RegistrySession(
      ref,
      baseUrl,
      config.http,
      await config.credentialsFor(ref.registry),
    );
    const platform = config.platform ?? { os: "linux", architecture: "amd64" };
    const manifest = await resolveManifest(session, ref, ref.digest ?? ref.tag!, platform);
    const layers = await mapLimit(manifest.layers, RANGE_READS_IN_FLIGHT, (layer, i) =>
      inspectLayer(session, layer, i),
    );
    const imageBytes = layers.reduce((s, l) => s + l.bytes, 0);
    if (imageBytes > MAX_IMAGE_BYTES)
      throw new RegistryAnswerError("bad-answer", 200, `the image is over 1 TB uncompressed`);
    const notes: string[] = [];
    const estargz = allEstargz(manifest.layers)
      ? { ref: text, digest: manifest.digest }
      : await findEstargzVariant(session, ref, platform, config.estargzTagSuffix ?? "-esgz", notes);
    const estimated = layers.filter((l) => l.estimated).length;
    if (estimated > 0)
      notes.push(
        `${estimated} layer(s) do not pin down their uncompressed size (a zstd frame without its content size, or a gzip layer that expands by more than 4 GiB); it is estimated from the cold-start model's compression ratio`,
      );
    return {
      ref: text,
      registry: ref.registry,
      repository: ref.repository,
      digest: manifest.digest,
      platformDigest: manifest.platformDigest,
      platform: manifest.platform,
      layers,
      compressedBytes: layers.reduce((s, l) => s + l.compressedBytes, 0),
      imageBytes,
      estargz,
      notes,
    };
  } catch (error) {
    if (error instanceof RegistryAnswerError) throw fail(error.message);
    if (error instanceof FetchRefusedError)
      throw fail(
        error.reason === "timeout"
          ? `registry ${error.message}; check the reference, or give imageBytes to deploy without inspecting`
          : `registry ${ref.registry} cannot be reached: ${error.message}`,
      );
    throw error;
  }
}

/**
 * https, as every public registry answers; a registry the operator trusted may answer over
 * plain http (docker's insecure-registries), tried when https fails to connect.
 */
async function registryBaseUrl(ref: ImageReference, config: InspectImageConfig): Promise<string> {
  const https = `https://${ref.apiHost}`;
  if (!config.trustedRegistries.has(ref.apiHost)) return https;
  try {
    await config.http(`${https}/v2/`, { headers: {}, maxBodyBytes: 64 * 1024 });
    return https;
  } catch (error) {
    if (error instanceof FetchRefusedError && error.reason === "network")
      return `http://${ref.apiHost}`;
    throw error;
  }
}

async function getManifest(
  session: RegistrySession,
  ref: ImageReference,
  reference: string,
): Promise<{ answer: PublicResponse; body: Record<string, unknown>; digest: string }> {
  const answer = await session.get(
    `manifests/${reference}`,
    { accept: ACCEPT },
    MANIFEST_MAX_BYTES,
  );
  if (answer.status === 404)
    throw new RegistryAnswerError(
      "not-found",
      404,
      `${ref.registry} has no ${ref.repository}:${reference} (404); check the repository and tag`,
    );
  if (answer.status !== 200)
    throw new RegistryAnswerError(
      "bad-answer",
      answer.status,
      `${ref.registry} answered ${answer.status} for ${ref.repository}:${reference}`,
    );
  const digest = `sha256:${createHash("sha256").update(answer.body).digest("hex")}`;
  const claimed = answer.headers["docker-content-digest"];
  if (claimed && claimed !== digest)
    throw new RegistryAnswerError(
      "bad-answer",
      200,
      `${ref.registry} says the manifest is ${claimed} but its bytes hash to ${digest}`,
    );
  if (reference.startsWith("sha256:") && reference !== digest)
    throw new RegistryAnswerError(
      "bad-answer",
      200,
      `${ref.registry} answered ${digest} for ${reference}`,
    );
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(answer.body.toString("utf8")) as Record<string, unknown>;
  } catch {
    throw new RegistryAnswerError(
      "bad-answer",
      200,
      `${ref.registry} sent a manifest that is not JSON`,
    );
  }
  return { answer, body, digest };
}

async function resolveManifest(
  session: RegistrySession,
  ref: ImageReference,
  reference: string,
  platform: { os: string; architecture: string },
): Promise<ResolvedManifest> {
  const top = await getManifest(session, ref, reference);
  const mediaType =
    typeof top.body.mediaType === "string"
      ? top.body.mediaType
      : (top.answer.headers["content-type"] ?? "");
  if (INDEX_TYPES.some((t) => mediaType.startsWith(t)) || Array.isArray(top.body.manifests)) {
    const entries = (top.body.manifests ?? []) as Descriptor[];
    const match = entries.find(
      (m) => m.platform?.os === platform.os && m.platform?.architecture === platform.architecture,
    );
    if (!match?.digest) {
      const offered = entries
        .map((m) => `${m.platform?.os ?? "?"}/${m.platform?.architecture ?? "?"}`)
        .join(", ");
      throw new RegistryAnswerError(
        "bad-answer",
        200,
        `${ref.repository}:${reference} has no ${platform.os}/${platform.architecture} image (it has ${offered || "none"})`,
      );
    }
    const chosen = await getManifest(session, ref, match.digest);
    return {
      digest: top.digest,
      platformDigest: chosen.digest,
      platform: `${platform.os}/${platform.architecture}`,
      layers: layersOf(chosen.body, ref),
    };
  }
  return {
    digest: top.digest,
    platformDigest: null,
    platform: null,
    layers: layersOf(top.body, ref),
  };
}

function layersOf(manifest: Record<string, unknown>, ref: ImageReference): Descriptor[] {
  const layers = manifest.layers;
  if (!Array.isArray(layers) || layers.length === 0)
    throw new RegistryAnswerError(
      "bad-answer",
      200,
      `${ref.repository}'s manifest lists no layers`,
    );
  if (layers.length > MAX_LAYERS)
    throw new RegistryAnswerError(
      "bad-answer",
      200,
      `${ref.repository} has ${layers.length} layers; Thaw takes at most ${MAX_LAYERS}`,
    );
  return layers as Descriptor[];
}

async function inspectLayer(
  session: RegistrySession,
  layer: Descriptor,
  index: number,
): Promise<InspectedLayer> {
  const name = `layer ${index + 1}`;
  const { digest, size, mediaType = "" } = layer;
  if (typeof digest !== "string" || !/^sha256:[a-f0-9]{64}$/.test(digest))
    throw new RegistryAnswerError("bad-answer", 200, `${name} has no sha256 digest`);
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0)
    throw new RegistryAnswerError("bad-answer", 200, `${name} has no size`);
  const encoding = layerEncodingOf(mediaType);
  if (!encoding)
    throw new RegistryAnswerError(
      "bad-answer",
      200,
      `${name} has media type '${mediaType}', not an image layer`,
    );
  const read = (from: number, length: number) =>
    readRange(session, digest, size, from, length, name);
  const annotated = Number(layer.annotations?.[ESTARGZ_UNCOMPRESSED_SIZE]);
  const known = Number.isSafeInteger(annotated) && annotated > 0 ? annotated : null;
  const base = { digest, mediaType, compressedBytes: size, estimated: false };
  if (encoding === "none") {
    await read(Math.max(0, size - 1), Math.min(1, size));
    return { ...base, bytes: size, compression: "none", content: "code" };
  }
  if (encoding === "zstd") {
    const head = await read(0, Math.min(ZSTD_HEADER_BYTES, size));
    const frame = zstdFrameContentSize(head);
    const fraction = PHYSICS.compressedFraction.zstd.code;
    const bytes = known ?? frame ?? Math.round(size / fraction);
    return {
      ...base,
      bytes,
      compression: "zstd",
      content: layerContentOf("zstd", bytes, size),
      estimated: known === null && frame === null,
    };
  }
  if (size < GZIP_HEADER_BYTES + GZIP_TRAILER_BYTES + 4)
    throw new RegistryAnswerError(
      "bad-answer",
      200,
      `${name} is ${size} bytes, too short for gzip`,
    );
  // The head first: its answer says how long the blob really is, before the tail is asked
  // for at an offset a lying manifest made up.
  const head = await read(0, GZIP_HEADER_BYTES);
  const tail = await read(size - GZIP_TRAILER_BYTES, GZIP_TRAILER_BYTES);
  if (head[0] !== 0x1f || head[1] !== 0x8b)
    throw new RegistryAnswerError("bad-answer", 200, `${name} is declared gzip but is not`);
  const fromTrailer = gzipUncompressedBytes(
    readGzipIsize(tail) ?? 0,
    size,
    1 / PHYSICS.compressedFraction["gzip-6"].code,
  );
  const bytes = known ?? fromTrailer.bytes;
  const compression = gzipLevelOf(head, bytes, size);
  return {
    ...base,
    bytes,
    compression,
    content: layerContentOf(compression, bytes, size),
    estimated: known === null && fromTrailer.ambiguous,
  };
}

/**
 * `length` bytes of a blob from `from`, checking that the blob is the size the manifest
 * declared (a registry answering a range says the whole size in Content-Range): a manifest
 * that lies about a layer's size would make every prediction of this image wrong.
 */
async function readRange(
  session: RegistrySession,
  digest: string,
  declared: number,
  from: number,
  length: number,
  name: string,
): Promise<Buffer> {
  if (length === 0) return Buffer.alloc(0);
  const answer = await session.get(
    `blobs/${digest}`,
    { range: `bytes=${from}-${from + length - 1}` },
    64 * 1024,
  );
  if (answer.status === 206) {
    const total = Number(/\/(\d+)\s*$/.exec(answer.headers["content-range"] ?? "")?.[1]);
    if (Number.isFinite(total) && total !== declared)
      throw new RegistryAnswerError(
        "bad-answer",
        206,
        `the manifest says ${name} is ${declared} bytes, but the registry holds ${total}`,
      );
    return answer.body.subarray(0, length);
  }
  if (answer.status === 200) {
    // A registry that ignores Range sends the blob; small ones fit in the cap, and are checked whole.
    if (answer.body.length !== declared)
      throw new RegistryAnswerError(
        "bad-answer",
        200,
        `the manifest says ${name} is ${declared} bytes, but the registry sent ${answer.body.length}`,
      );
    return answer.body.subarray(from, from + length);
  }
  if (answer.status === 416) {
    // Range Not Satisfiable: the blob is shorter than the manifest says (`bytes */<size>`).
    const total = /\/(\d+)\s*$/.exec(answer.headers["content-range"] ?? "")?.[1];
    throw new RegistryAnswerError(
      "bad-answer",
      416,
      `the manifest says ${name} is ${declared} bytes, but the registry holds ${total ?? "fewer"}`,
    );
  }
  if (answer.status === 404)
    throw new RegistryAnswerError(
      "not-found",
      404,
      `${name} (${digest}) is missing from the registry`,
    );
  throw new RegistryAnswerError(
    "bad-answer",
    answer.status,
    `reading ${name} answered ${answer.status}`,
  );
}

function allEstargz(layers: Descriptor[]): boolean {
  return layers.every((l) =>
    /^sha256:[a-f0-9]{64}$/.test(l.annotations?.[ESTARGZ_TOC_DIGEST] ?? ""),
  );
}

/**
 * The repository's eStargz variant by the tag convention (`<tag><suffix>`, as
 * `nerdctl image convert --estargz` and ctr-remote are commonly told to push), used only
 * when every layer of it carries the TOC digest annotation stargz-snapshotter needs.
 */
async function findEstargzVariant(
  session: RegistrySession,
  ref: ImageReference,
  platform: { os: string; architecture: string },
  suffix: string,
  notes: string[],
): Promise<EstargzVariant | null> {
  if (!ref.tag) return null;
  const tag = `${ref.tag}${suffix}`;
  try {
    const variant = await resolveManifest(session, ref, tag, platform);
    if (!allEstargz(variant.layers)) {
      notes.push(
        `${tag} exists but its layers carry no eStargz TOC annotation; lazy starts are off`,
      );
      return null;
    }
    return { ref: withTag(ref, tag), digest: variant.digest };
  } catch (error) {
    if (error instanceof RegistryAnswerError && error.kind === "not-found") return null;
    throw error;
  }
}

async function mapLimit<T, R>(
  items: T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
