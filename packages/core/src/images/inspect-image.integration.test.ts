import { randomBytes } from "node:crypto";
import net from "node:net";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../errors/index.ts";
import { fetchPublic } from "../net/public-fetch.ts";
import { inspectImage, type InspectImageConfig } from "./inspect-image.ts";
import { ESTARGZ_TOC_DIGEST, ESTARGZ_UNCOMPRESSED_SIZE } from "./layer-facts.ts";
import {
  buildUmociImage,
  pushTinyImage,
  sha256Digest,
  startTestRegistry,
  startTokenServer,
  type TestRegistry,
} from "./testing/test-registry.ts";

// Inspection against the real registry (docker-registry), with images built by umoci.

const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
const OCI_INDEX = "application/vnd.oci.image.index.v1+json";
const OCI_CONFIG = "application/vnd.oci.image.config.v1+json";
const GZIP_LAYER = "application/vnd.oci.image.layer.v1.tar+gzip";
const TAR_LAYER = "application/vnd.oci.image.layer.v1.tar";

let registry: TestRegistry;
let config: InspectImageConfig;
const facts = {} as {
  gzipLayer: Buffer;
  tarLayer: Buffer;
  indexDigest: string;
  amd64Digest: string;
  arm64Digest: string;
  esgzDigest: string;
};

function configFor(host: string, timeoutMs = 5_000): InspectImageConfig {
  const trusted = new Set([host]);
  return {
    http: (url, init) => fetchPublic(url, { ...init, timeoutMs, trustedHosts: trusted }),
    credentialsFor: () => Promise.resolve(null),
    trustedRegistries: trusted,
  };
}

async function pushManifest(
  repository: string,
  tag: string,
  configBlob: Buffer,
  layers: { bytes: Buffer; mediaType: string; annotations?: Record<string, string> }[],
): Promise<string> {
  const cfg = await registry.pushBlob(repository, configBlob);
  const descriptors = [];
  for (const layer of layers) {
    const pushed = await registry.pushBlob(repository, layer.bytes);
    descriptors.push({ mediaType: layer.mediaType, ...pushed, annotations: layer.annotations });
  }
  return registry.pushManifest(repository, tag, OCI_MANIFEST, {
    schemaVersion: 2,
    mediaType: OCI_MANIFEST,
    config: { mediaType: OCI_CONFIG, ...cfg },
    layers: descriptors,
  });
}

beforeAll(async () => {
  registry = await startTestRegistry();
  config = configFor(registry.host);
  const python = "import os\n".repeat(20_000);
  const amd64 = await buildUmociImage([
    { "app/main.py": python },
    { "app/blob.bin": randomBytes(300_000) },
  ]);
  const arm64 = await buildUmociImage([{ "app/main.py": python }], { architecture: "arm64" });
  facts.gzipLayer = amd64.layers[0]!;
  // The second layer shipped uncompressed, as `buildah --disable-compression` pushes it.
  facts.tarLayer = gunzipSync(amd64.layers[1]!);
  const layers = [
    { bytes: facts.gzipLayer, mediaType: GZIP_LAYER },
    { bytes: facts.tarLayer, mediaType: TAR_LAYER },
  ];
  facts.amd64Digest = await pushManifest("team/app", "amd64", amd64.config, layers);
  facts.arm64Digest = await pushManifest("team/app", "arm64", arm64.config, [
    { bytes: arm64.layers[0]!, mediaType: GZIP_LAYER },
  ]);
  const manifestSize = async (tag: string) =>
    (
      await fetch(`http://${registry.host}/v2/team/app/manifests/${tag}`, {
        headers: { accept: OCI_MANIFEST },
      }).then((r) => r.arrayBuffer())
    ).byteLength;
  facts.indexDigest = await registry.pushManifest("team/app", "v1", OCI_INDEX, {
    schemaVersion: 2,
    mediaType: OCI_INDEX,
    manifests: [
      {
        mediaType: OCI_MANIFEST,
        digest: facts.arm64Digest,
        size: await manifestSize("arm64"),
        platform: { os: "linux", architecture: "arm64" },
      },
      {
        mediaType: OCI_MANIFEST,
        digest: facts.amd64Digest,
        size: await manifestSize("amd64"),
        platform: { os: "linux", architecture: "amd64" },
      },
    ],
  });
  // The eStargz variant: the layers stargz-snapshotter mounts carry the TOC digest.
  const toc = { [ESTARGZ_TOC_DIGEST]: sha256Digest(Buffer.from("toc")) };
  facts.esgzDigest = await pushManifest("team/app", "v1-esgz", amd64.config, [
    {
      bytes: facts.gzipLayer,
      mediaType: GZIP_LAYER,
      annotations: { ...toc, [ESTARGZ_UNCOMPRESSED_SIZE]: String(python.length + 2_048) },
    },
    { bytes: amd64.layers[1]!, mediaType: GZIP_LAYER, annotations: toc },
  ]);
  // A tag with the variant's name whose layers are not eStargz.
  await pushManifest("team/plain", "v1", amd64.config, [
    { bytes: facts.gzipLayer, mediaType: GZIP_LAYER },
  ]);
  await pushManifest("team/plain", "v1-esgz", amd64.config, [
    { bytes: facts.gzipLayer, mediaType: GZIP_LAYER },
  ]);
}, 120_000);

afterAll(() => registry?.stop());

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error("inspection should have been refused");
    },
    (e: unknown) => e as AppError,
  );

describe("inspectImage against a real registry", () => {
  it("resolves an index to the fleet's platform and reads every layer's real size", async () => {
    const ref = `${registry.host}/team/app:v1`;
    const found = await inspectImage({ ref, field: "body.imageRef", config });
    expect(found.digest).toBe(facts.indexDigest);
    expect(found.platformDigest).toBe(facts.amd64Digest);
    expect(found.platform).toBe("linux/amd64");
    const gzipBytes = gunzipSync(facts.gzipLayer).length;
    expect(found.layers.map((l) => [l.compression, l.bytes, l.compressedBytes])).toEqual([
      ["gzip-6", gzipBytes, facts.gzipLayer.length],
      ["none", facts.tarLayer.length, facts.tarLayer.length],
    ]);
    expect(found.imageBytes).toBe(gzipBytes + facts.tarLayer.length);
    expect(found.estargz).toEqual({
      ref: `${registry.host}/team/app:v1-esgz`,
      digest: facts.esgzDigest,
    });
  });

  it("takes another platform when asked, and a reference by digest", async () => {
    const arm = await inspectImage({
      ref: `${registry.host}/team/app:v1`,
      field: "imageRef",
      config: { ...config, platform: { os: "linux", architecture: "arm64" } },
    });
    expect(arm.platformDigest).toBe(facts.arm64Digest);
    expect(arm.layers).toHaveLength(1);
    const byDigest = await inspectImage({
      ref: `${registry.host}/team/app@${facts.amd64Digest}`,
      field: "imageRef",
      config,
    });
    expect(byDigest.digest).toBe(facts.amd64Digest);
    expect(byDigest.platformDigest).toBeNull();
  });

  it("uses the variant only when its layers carry the eStargz TOC annotation", async () => {
    const found = await inspectImage({
      ref: `${registry.host}/team/plain:v1`,
      field: "imageRef",
      config,
    });
    expect(found.estargz).toBeNull();
    expect(found.notes.join("\n")).toMatch(/v1-esgz exists but .* no eStargz TOC/);
    const esgz = await inspectImage({
      ref: `${registry.host}/team/app:v1-esgz`,
      field: "imageRef",
      config,
    });
    expect(esgz.estargz).toEqual({
      ref: `${registry.host}/team/app:v1-esgz`,
      digest: facts.esgzDigest,
    });
    expect(esgz.layers[0]!.bytes).toBe("import os\n".repeat(20_000).length + 2_048);
  });

  it("names the field and the missing tag when the registry has no such image", async () => {
    const error = await refusal(
      inspectImage({ ref: `${registry.host}/team/app:v9`, field: "body.imageRef", config }),
    );
    expect(error).toBeInstanceOf(AppError);
    expect(error.code).toBe("UNPROCESSABLE");
    expect(error.details?.field).toBe("body.imageRef");
    expect(error.message).toMatch(/body\.imageRef: .*team\/app:v9 \(404\)/);
  });

  it("refuses a manifest that lies about a layer's size", async () => {
    const cfg = await registry.pushBlob("team/lies", Buffer.from("{}"));
    const layer = await registry.pushBlob("team/lies", facts.gzipLayer);
    const pushed = await registry
      .pushManifest("team/lies", "v1", OCI_MANIFEST, {
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        config: { mediaType: OCI_CONFIG, ...cfg },
        layers: [{ mediaType: GZIP_LAYER, digest: layer.digest, size: layer.size * 4 }],
      })
      .then(
        () => true,
        () => false,
      );
    expect(pushed, "docker-registry stores a manifest whatever sizes it declares").toBe(true);
    const error = await refusal(
      inspectImage({ ref: `${registry.host}/team/lies:v1`, field: "imageRef", config }),
    );
    expect(error.message).toMatch(
      new RegExp(`says layer 1 is ${layer.size * 4} bytes, but the registry holds ${layer.size}`),
    );
  });

  it("gives up on a registry that never answers, naming the field", async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const host = `127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
    try {
      const error = await refusal(
        inspectImage({
          ref: `${host}/team/app:v1`,
          field: "body.imageRef",
          config: configFor(host, 500),
        }),
      );
      expect(error.code).toBe("UNPROCESSABLE");
      expect(error.message).toMatch(/body\.imageRef: registry .* did not answer within 0.5 s/);
    } finally {
      silent.close();
    }
  });

  it("never dials a loopback registry the operator did not trust", async () => {
    const error = await refusal(
      inspectImage({
        ref: `${registry.host}/team/app:v1`,
        field: "imageRef",
        config: { ...config, trustedRegistries: new Set(), http: configFor("other:1").http },
      }),
    );
    expect(error.message).toMatch(
      /imageRef: registry 127\.0\.0\.1:\d+ cannot be reached: .*loopback/,
    );
  });

  it("answers a Bearer challenge: an anonymous token for a public repository, the org's credential for a private one", async () => {
    const tokens = await startTokenServer({
      publicRepositories: ["library/app"],
      users: { "ci-bot": "token-password" },
    });
    const tokenRegistry = await startTestRegistry({
      tokenAuth: {
        ...tokens,
        pushToken: (repository) => tokens.mint(repository, ["pull", "push"]),
      },
    });
    try {
      await pushTinyImage(tokenRegistry, "library/app", "v1");
      await pushTinyImage(tokenRegistry, "team/private", "v1");
      // The realm is the registry's to name, so it is dialled as carefully: trusted here only
      // because this token server is on loopback.
      const trusted = new Set([tokenRegistry.host, new URL(tokens.realm).host]);
      const withCredentials = (credentials: { username: string; password: string } | null) => ({
        ...configFor(tokenRegistry.host),
        http: ((url, init) =>
          fetchPublic(url, {
            ...init,
            timeoutMs: 5_000,
            trustedHosts: trusted,
          })) as InspectImageConfig["http"],
        credentialsFor: () => Promise.resolve(credentials),
      });
      const anonymous = await inspectImage({
        ref: `${tokenRegistry.host}/library/app:v1`,
        field: "imageRef",
        config: withCredentials(null),
      });
      expect(anonymous.layers).toHaveLength(1);
      expect(tokens.requests.at(-1)).toEqual({
        scope: "repository:library/app:pull",
        basic: false,
      });

      const refused = await refusal(
        inspectImage({
          ref: `${tokenRegistry.host}/team/private:v1`,
          field: "imageRef",
          config: withCredentials(null),
        }),
      );
      expect(refused.message).toMatch(/wants credentials for team\/private \(401\)/);
      const wrong = await refusal(
        inspectImage({
          ref: `${tokenRegistry.host}/team/private:v1`,
          field: "imageRef",
          config: withCredentials({ username: "ci-bot", password: "nope" }),
        }),
      );
      expect(wrong.message).toMatch(/refused the org's credentials/);
      expect(wrong.message).not.toContain("nope");
      const allowed = await inspectImage({
        ref: `${tokenRegistry.host}/team/private:v1`,
        field: "imageRef",
        config: withCredentials({ username: "ci-bot", password: "token-password" }),
      });
      expect(allowed.layers).toHaveLength(1);
      expect(tokens.requests.at(-1)).toEqual({
        scope: "repository:team/private:pull",
        basic: true,
      });
    } finally {
      await tokenRegistry.stop();
      await tokens.stop();
    }
  });
});
