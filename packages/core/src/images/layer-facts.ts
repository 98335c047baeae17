import type { LayerCompression, LayerContent } from "@thaw/protocol";

// What a layer's descriptor and a few of its bytes say about it, as pure functions: the
// registry inspection reads 10 bytes from a gzip layer's head and 4 from its tail instead
// of the layer. The cold-start model needs each layer's uncompressed size (what lands on
// disk), how it was compressed (gzip decompression is serial and its speed depends on the
// level) and whether it is high-entropy weights.

/** Media types of image layers, OCI's and Docker's. */
const GZIP_TYPES = [
  "application/vnd.oci.image.layer.v1.tar+gzip",
  "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
  "application/vnd.docker.image.rootfs.diff.tar.gzip",
  "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
];
const ZSTD_TYPES = [
  "application/vnd.oci.image.layer.v1.tar+zstd",
  "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
];
const TAR_TYPES = [
  "application/vnd.oci.image.layer.v1.tar",
  "application/vnd.oci.image.layer.nondistributable.v1.tar",
];

export type LayerEncoding = "gzip" | "zstd" | "none";

/** The layer's encoding from its media type, or null for a type that is not a layer. */
export function layerEncodingOf(mediaType: string): LayerEncoding | null {
  if (GZIP_TYPES.includes(mediaType)) return "gzip";
  if (ZSTD_TYPES.includes(mediaType)) return "zstd";
  if (TAR_TYPES.includes(mediaType)) return "none";
  return null;
}

/** The eStargz annotations (stargz-snapshotter's estargz package). */
export const ESTARGZ_TOC_DIGEST = "containerd.io/snapshot/stargz/toc.digest";
export const ESTARGZ_UNCOMPRESSED_SIZE = "io.containers.estargz.uncompressed-size";

/** Bytes of a gzip member's fixed header (RFC 1952 §2.3) and of its ISIZE trailer. */
export const GZIP_HEADER_BYTES = 10;
export const GZIP_TRAILER_BYTES = 4;
const TWO_TO_32 = 2 ** 32;

/** Beyond this many uncompressed bytes per compressed byte, no image layer goes. */
const MAX_PLAUSIBLE_GZIP_RATIO = 20;

/**
 * The uncompressed size of a gzip stream from its trailer's ISIZE (the size mod 2^32, of the
 * last member — a layer is one member as every image builder writes it) and its compressed
 * size. Candidates are ISIZE + k·4 GiB from the compressed size down (deflate grows data by
 * at most ~0.03% plus framing) up to a 20× ratio. One candidate: exact. Several (a layer of a
 * few GB that expands by more than 4 GiB): the one nearest, in ratio, to what gzip does to
 * code (the cold-start model's figure, `expectedRatio`), flagged as ambiguous.
 */
export function gzipUncompressedBytes(
  isize: number,
  compressedBytes: number,
  expectedRatio: number,
): { bytes: number; ambiguous: boolean } {
  const floor = Math.max(0, compressedBytes - Math.ceil(compressedBytes / 1_000) - 1_024);
  // Up to 20× with the compressed size's own rounding (a layer at exactly 20× whose size was
  // rounded down by a byte must still count as a candidate).
  const ceiling = Math.max(floor, (compressedBytes + 1) * MAX_PLAUSIBLE_GZIP_RATIO);
  let first = isize;
  while (first < floor) first += TWO_TO_32;
  const candidates = [first];
  for (let next = first + TWO_TO_32; next <= ceiling; next += TWO_TO_32) candidates.push(next);
  if (candidates.length === 1) return { bytes: first, ambiguous: false };
  const distance = (bytes: number) =>
    Math.abs(Math.log(Math.max(bytes, 1) / Math.max(compressedBytes, 1) / expectedRatio));
  const best = candidates.reduce((a, b) => (distance(b) < distance(a) ? b : a));
  return { bytes: best, ambiguous: true };
}

/** ISIZE from the stream's last 4 bytes (little-endian). */
export function readGzipIsize(tail: Buffer): number | null {
  return tail.length === GZIP_TRAILER_BYTES ? tail.readUInt32LE(0) : null;
}

/**
 * The compression the cold-start model knows that best matches a gzip layer. A stored
 * (level-0) stream is as large as its input; the header's XFL byte is 2 when the compressor
 * used its slowest, best setting (level 9); anything else decompresses like docker's
 * default level 6.
 */
export function gzipLevelOf(header: Buffer, uncompressedBytes: number, compressedBytes: number) {
  if (uncompressedBytes > 0 && compressedBytes >= uncompressedBytes * 0.99)
    return "gzip-0" as const;
  const isGzip = header.length >= GZIP_HEADER_BYTES && header[0] === 0x1f && header[1] === 0x8b;
  return isGzip && header[8] === 2 ? ("gzip-9" as const) : ("gzip-6" as const);
}

/** A zstd frame's magic number, little-endian (RFC 8878 §3.1.1). */
const ZSTD_MAGIC = 0xfd2fb528;
/** Magic, frame header descriptor, window descriptor, dictionary id (≤4), content size (≤8). */
export const ZSTD_HEADER_BYTES = 18;

/**
 * The first frame's Frame_Content_Size (RFC 8878 §3.1.1.1), or null when the encoder did not
 * write it (streaming encoders, as containerd's, often do not). A layer written as one frame
 * is then exactly this size; the caller checks that the frame covers the blob.
 */
export function zstdFrameContentSize(header: Buffer): number | null {
  if (header.length < 6 || header.readUInt32LE(0) !== ZSTD_MAGIC) return null;
  const descriptor = header[4] ?? 0;
  const fcsFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  const dictIdFlag = descriptor & 3;
  const fieldBytes = [singleSegment ? 1 : 0, 2, 4, 8][fcsFlag] ?? 0;
  if (fieldBytes === 0) return null;
  const at = 5 + (singleSegment ? 0 : 1) + [0, 1, 2, 4][dictIdFlag]!;
  if (header.length < at + fieldBytes) return null;
  switch (fieldBytes) {
    case 1:
      return header.readUInt8(at);
    case 2:
      return header.readUInt16LE(at) + 256;
    case 4:
      return header.readUInt32LE(at);
    default:
      return Number(header.readBigUInt64LE(at));
  }
}

/**
 * Quantized or bf16 tensors barely compress (their mantissas are close to random), so a
 * large layer that a real compressor shrank by less than 15% is weights; everything else —
 * Python, wheels, shared objects, CUDA libraries — counts as code, the cold-start model's
 * default. An uncompressed or stored layer tells nothing of its entropy: code.
 */
export function layerContentOf(
  compression: LayerCompression,
  uncompressedBytes: number,
  compressedBytes: number,
): LayerContent {
  const LARGE = 256 * 1024 * 1024;
  if (compression === "none" || compression === "gzip-0") return "code";
  return uncompressedBytes >= LARGE && uncompressedBytes <= compressedBytes * 1.15
    ? "weights"
    : "code";
}

export type { LayerCompression };
