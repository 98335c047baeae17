import { describe, expect, it } from "vitest";
import { imageBlobs, pinnedReference, referencedBlobs, registryHost } from "./image-blobs.ts";

const D = (c: string) => `sha256:${c.repeat(64)}`;
const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";

describe("image references", () => {
  it("pins a reference by digest, dropping the tag but not the registry port", () => {
    expect(pinnedReference("127.0.0.1:5000/thaw/probe:v1", D("a"))).toBe(
      `127.0.0.1:5000/thaw/probe@${D("a")}`,
    );
    expect(pinnedReference("127.0.0.1:5000/thaw/probe", D("a"))).toBe(
      `127.0.0.1:5000/thaw/probe@${D("a")}`,
    );
    expect(pinnedReference(`reg/x:v1@${D("b")}`, D("a"))).toBe(`reg/x@${D("a")}`);
    expect(pinnedReference("reg.io/x:v1", undefined)).toBe("reg.io/x:v1");
  });

  it("finds the registry host", () => {
    expect(registryHost("127.0.0.1:5000/thaw/probe:v1")).toBe("127.0.0.1:5000");
    expect(registryHost("ghcr.io/thaw/llama:v1")).toBe("ghcr.io");
    expect(registryHost("localhost/x")).toBe("localhost");
    expect(registryHost("library/busybox:1")).toBe("docker.io");
  });
});

describe("image blobs", () => {
  const manifest = JSON.stringify({
    config: { digest: D("c"), size: 500 },
    layers: [
      { digest: D("1"), size: 1000 },
      { digest: D("2"), size: 2000 },
    ],
  });
  const index = JSON.stringify({
    manifests: [
      {
        mediaType: OCI_MANIFEST,
        digest: D("9"),
        size: 10,
        platform: { os: "linux", architecture: "arm64" },
      },
      {
        mediaType: OCI_MANIFEST,
        digest: D("m"),
        size: manifest.length,
        platform: { os: "linux", architecture: "amd64" },
      },
    ],
  });
  const store: Record<string, string> = { [D("i")]: index, [D("m")]: manifest };
  const get = (digest: string) => {
    const text = store[digest];
    return text === undefined ? Promise.reject(new Error("not found")) : Promise.resolve(text);
  };

  it("walks index → platform manifest → config and layers, with exact sizes", async () => {
    const image = await imageBlobs(get, D("i"), { os: "linux", architecture: "amd64" });
    expect(image.layerDigests).toEqual([D("1"), D("2")]);
    expect(image.blobs).toEqual([
      { digest: D("i"), size: index.length },
      { digest: D("m"), size: manifest.length },
      { digest: D("c"), size: 500 },
      { digest: D("1"), size: 1000 },
      { digest: D("2"), size: 2000 },
    ]);
    expect(image.totalBytes).toBe(index.length + manifest.length + 3500);
  });

  it("refuses an image without this platform", async () => {
    await expect(imageBlobs(get, D("i"), { os: "linux", architecture: "s390x" })).rejects.toThrow(
      /no manifest for linux\/s390x/,
    );
  });

  it("lists every referenced blob of a checkpoint-style index, skipping other platforms", async () => {
    const checkpoint = JSON.stringify({
      manifests: [
        {
          mediaType: "application/vnd.containerd.container.criu.checkpoint.criu.tar",
          digest: D("k"),
          size: 7,
        },
        {
          mediaType: "application/vnd.oci.image.index.v1+json",
          digest: D("i"),
          size: index.length,
        },
      ],
    });
    const blobs = await referencedBlobs(
      (d) => (d === D("x") ? Promise.resolve(checkpoint) : get(d)),
      D("x"),
      { os: "linux", architecture: "amd64" },
    );
    expect(blobs.map((b) => b.digest).sort()).toEqual(
      [D("x"), D("k"), D("i"), D("m"), D("c"), D("1"), D("2")].sort(),
    );
  });
});
