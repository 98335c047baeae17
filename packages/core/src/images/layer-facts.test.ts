import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseImageReference, withTag } from "./image-reference.ts";
import {
  gzipLevelOf,
  gzipUncompressedBytes,
  layerContentOf,
  layerEncodingOf,
  readGzipIsize,
  zstdFrameContentSize,
} from "./layer-facts.ts";

describe("gzipUncompressedBytes", () => {
  it("is exact wherever one size fits, and says when several would", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 200_000_000_000 }),
        fc.double({ min: 0.05, max: 1.0004, noNaN: true }),
        (uncompressed, fraction) => {
          const compressed = Math.max(18, Math.round(uncompressed * fraction));
          const found = gzipUncompressedBytes(uncompressed % 2 ** 32, compressed, 3.2);
          expect(found.bytes % 2 ** 32).toBe(uncompressed % 2 ** 32);
          if (!found.ambiguous) expect(found.bytes).toBe(uncompressed);
          // No other size with this ISIZE is possible (below the compressed size) or plausible
          // (past a 20× ratio): exact.
          const otherPossible = uncompressed - 2 ** 32 >= compressed * 0.999 - 1_024;
          const otherPlausible = uncompressed + 2 ** 32 <= (compressed + 1) * 20;
          if (!otherPossible && !otherPlausible)
            expect(found).toEqual({ bytes: uncompressed, ambiguous: false });
        },
      ),
    );
  });

  it("keeps a layer at exactly 20× as a candidate although its compressed size was rounded", () => {
    // CI's counterexample (seed 8070035): 6,088,677,561 bytes at 0.05 → 304,433,878 compressed.
    const found = gzipUncompressedBytes(6_088_677_561 % 2 ** 32, 304_433_878, 3.2);
    expect(found.ambiguous).toBe(true);
  });

  it("takes the code-like ratio for a layer of a few GB that expands past 4 GiB", () => {
    // 2 GB of gzip'd CUDA libraries and wheels that unpack to 6.5 GB.
    const found = gzipUncompressedBytes(6_500_000_000 % 2 ** 32, 2_000_000_000, 3.2);
    expect(found).toEqual({ bytes: 6_500_000_000, ambiguous: true });
  });

  it("reads ISIZE and the level from a real gzip stream", () => {
    const text = Buffer.from("import torch\n".repeat(10_000));
    for (const [level, expected] of [
      [9, "gzip-9"],
      [6, "gzip-6"],
      [0, "gzip-0"],
    ] as const) {
      const blob = gzipSync(text, { level });
      const isize = readGzipIsize(blob.subarray(blob.length - 4));
      expect(isize).toBe(text.length);
      expect(gzipLevelOf(blob.subarray(0, 10), text.length, blob.length)).toBe(expected);
    }
  });
});

describe("zstdFrameContentSize", () => {
  it("reads the content size field in each of its widths, and null without one", () => {
    const frame = (descriptor: number, field: number[]) =>
      Buffer.from([0x28, 0xb5, 0x2f, 0xfd, descriptor, ...field]);
    expect(zstdFrameContentSize(frame(0x20, [200]))).toBe(200); // single segment, 1 byte
    expect(zstdFrameContentSize(frame(0x40, [0x58, 0x10, 0x26]))).toBe(10_000); // window, 2 bytes
    expect(zstdFrameContentSize(frame(0xa0, [0x00, 0xe1, 0xf5, 0x05]))).toBe(100_000_000);
    expect(zstdFrameContentSize(frame(0xe0, [0, 0, 0, 0, 1, 0, 0, 0]))).toBe(2 ** 32);
    expect(zstdFrameContentSize(frame(0x00, [0x58]))).toBeNull();
    expect(zstdFrameContentSize(Buffer.from("not zstd at all"))).toBeNull();
  });
});

describe("layer media types and content", () => {
  it("knows OCI's and Docker's layer types and nothing else", () => {
    expect(layerEncodingOf("application/vnd.docker.image.rootfs.diff.tar.gzip")).toBe("gzip");
    expect(layerEncodingOf("application/vnd.oci.image.layer.v1.tar+zstd")).toBe("zstd");
    expect(layerEncodingOf("application/vnd.oci.image.layer.v1.tar")).toBe("none");
    expect(layerEncodingOf("application/vnd.oci.image.config.v1+json")).toBeNull();
  });

  it("calls a large layer that barely compressed weights, and never judges a stored one", () => {
    const GB = 1_000_000_000;
    expect(layerContentOf("gzip-6", 8 * GB, 7.9 * GB)).toBe("weights");
    expect(layerContentOf("gzip-6", 8 * GB, 2.5 * GB)).toBe("code");
    expect(layerContentOf("gzip-6", 1_000_000, 999_000)).toBe("code");
    expect(layerContentOf("none", 8 * GB, 8 * GB)).toBe("code");
  });
});

describe("parseImageReference", () => {
  it("reads references as docker does", () => {
    expect(parseImageReference("ubuntu")).toEqual({
      registry: "docker.io",
      apiHost: "registry-1.docker.io",
      repository: "library/ubuntu",
      tag: "latest",
      digest: null,
    });
    expect(parseImageReference("vllm/vllm-openai:v0.11.0")).toMatchObject({
      apiHost: "registry-1.docker.io",
      repository: "vllm/vllm-openai",
      tag: "v0.11.0",
    });
    const digest = `sha256:${"a".repeat(64)}`;
    expect(parseImageReference(`ghcr.io/org/img@${digest}`)).toMatchObject({
      registry: "ghcr.io",
      repository: "org/img",
      tag: null,
      digest,
    });
    expect(parseImageReference("localhost:5000/a/b:c")).toMatchObject({
      apiHost: "localhost:5000",
      repository: "a/b",
    });
    expect(parseImageReference("-k/x")).toBeNull();
  });

  it("writes another tag the way the user wrote the repository", () => {
    expect(withTag(parseImageReference("ubuntu:22.04")!, "22.04-esgz")).toBe("ubuntu:22.04-esgz");
    expect(withTag(parseImageReference("ghcr.io/o/i:v1")!, "v1-esgz")).toBe("ghcr.io/o/i:v1-esgz");
  });
});
