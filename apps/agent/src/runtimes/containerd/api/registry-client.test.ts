import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { chainIds, platformManifest, referenceTarget } from "./api-pull.ts";
import { fetchHttpGet, type HttpGet } from "./http-get.ts";
import { RegistryClient, RegistryError } from "./registry-client.ts";

// The registry side of the agent's own pull, against a scripted registry (a fetch that answers
// as Docker Hub, GHCR or an htpasswd registry do, and records what it was sent).

interface Sent {
  url: string;
  authorization: string | undefined;
}

function scriptedRegistry(answer: (url: URL, authorization: string | undefined) => Response): {
  get: HttpGet;
  sent: Sent[];
} {
  const sent: Sent[] = [];
  const fetchFn = (input: string | URL, init?: RequestInit) => {
    const url = new URL(input);
    const headers = new Headers(init?.headers);
    const authorization = headers.get("authorization") ?? undefined;
    sent.push({ url: url.toString(), authorization });
    return Promise.resolve(answer(url, authorization));
  };
  return { get: fetchHttpGet(fetchFn as typeof fetch), sent };
}

const manifest = JSON.stringify({
  schemaVersion: 2,
  mediaType: "application/vnd.oci.image.manifest.v1+json",
  config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: "sha256:c", size: 2 },
  layers: [],
});
const digestOf = (text: string) =>
  `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;
const manifestAnswer = () =>
  new Response(manifest, {
    headers: { "content-type": "application/vnd.oci.image.manifest.v1+json" },
  });

describe("registry client", () => {
  it("gets an anonymous pull token when the registry asks for a Bearer (Docker Hub)", async () => {
    const registry = scriptedRegistry((url, authorization) => {
      if (url.host === "auth.docker.io") return Response.json({ token: "anon-token" });
      if (authorization !== "Bearer anon-token") {
        return new Response("", {
          status: 401,
          headers: {
            "www-authenticate":
              'Bearer realm="https://auth.docker.io/token",service="registry.docker.io"',
          },
        });
      }
      return manifestAnswer();
    });
    const client = new RegistryClient({
      registry: "docker.io",
      repository: "library/busybox",
      plainHttp: false,
      get: registry.get,
    });
    const got = await client.manifest("latest");
    expect(got).toMatchObject({
      digest: digestOf(manifest),
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      size: Buffer.byteLength(manifest),
    });
    expect(registry.sent).toEqual([
      {
        url: "https://registry-1.docker.io/v2/library/busybox/manifests/latest",
        authorization: undefined,
      },
      {
        url: "https://auth.docker.io/token?service=registry.docker.io&scope=repository%3Alibrary%2Fbusybox%3Apull",
        authorization: undefined,
      },
      {
        url: "https://registry-1.docker.io/v2/library/busybox/manifests/latest",
        authorization: "Bearer anon-token",
      },
    ]);
    expect(client.secrets).toContain("anon-token");
  });

  it("sends the credential as Basic to the token realm, and never to a blob store it redirects to", async () => {
    const basic = `Basic ${Buffer.from("me:s3cret").toString("base64")}`;
    const registry = scriptedRegistry((url, authorization) => {
      if (url.host === "ghcr.io" && url.pathname === "/token") {
        return authorization === basic
          ? Response.json({ token: "t0k" })
          : new Response("", { status: 401 });
      }
      if (url.host === "blobs.example") return new Response("{}");
      if (authorization !== "Bearer t0k") {
        return new Response("", {
          status: 401,
          headers: { "www-authenticate": 'Bearer realm="https://ghcr.io/token"' },
        });
      }
      return new Response("", {
        status: 307,
        headers: { location: "https://blobs.example/x?sig=abc" },
      });
    });
    const client = new RegistryClient({
      registry: "ghcr.io",
      repository: "team/model",
      plainHttp: false,
      credential: { registry: "ghcr.io", username: "me", password: "s3cret" },
      get: registry.get,
    });
    const blob = await client.blob("sha256:c");
    const chunks: Uint8Array[] = [];
    for await (const chunk of blob.body) chunks.push(chunk);
    expect(Buffer.concat(chunks).toString()).toBe("{}");
    expect(registry.sent.map((s) => [new URL(s.url).host, s.authorization])).toEqual([
      ["ghcr.io", undefined],
      ["ghcr.io", basic],
      ["ghcr.io", "Bearer t0k"],
      ["blobs.example", undefined],
    ]);
  });

  it("answers a Basic challenge with the credential, and says 401 when there is none", async () => {
    const basic = `Basic ${Buffer.from("u:p").toString("base64")}`;
    const answer = (_: URL, authorization: string | undefined) =>
      authorization === basic
        ? manifestAnswer()
        : new Response(JSON.stringify({ errors: [{ code: "UNAUTHORIZED", message: "authn" }] }), {
            status: 401,
            statusText: "Unauthorized",
            headers: { "www-authenticate": 'Basic realm="registry"' },
          });
    const withCredential = new RegistryClient({
      registry: "127.0.0.1:5000",
      repository: "private/probe",
      plainHttp: true,
      credential: { registry: "127.0.0.1:5000", username: "u", password: "p" },
      get: scriptedRegistry(answer).get,
    });
    expect((await withCredential.manifest("v1")).digest).toBe(digestOf(manifest));

    const without = new RegistryClient({
      registry: "127.0.0.1:5000",
      repository: "private/probe",
      plainHttp: true,
      get: scriptedRegistry(answer).get,
    });
    const error = await without.manifest("v1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RegistryError);
    expect(error).toMatchObject({ status: 401 });
    expect((error as Error).message).toBe(
      "127.0.0.1:5000/private/probe manifests/v1: 401 Unauthorized (UNAUTHORIZED: authn)",
    );
  });

  it("refuses a manifest whose bytes are not the digest asked for", async () => {
    const client = new RegistryClient({
      registry: "ghcr.io",
      repository: "a/b",
      plainHttp: false,
      get: scriptedRegistry(() => manifestAnswer()).get,
    });
    const asked = `sha256:${"1".repeat(64)}`;
    await expect(client.manifest(asked)).rejects.toThrow(
      `registry served ${digestOf(manifest)} for ${asked}`,
    );
  });

  it("refuses a redirect to plain HTTP from a TLS registry", async () => {
    const client = new RegistryClient({
      registry: "ghcr.io",
      repository: "a/b",
      plainHttp: false,
      get: scriptedRegistry(
        () => new Response("", { status: 302, headers: { location: "http://blobs.example/x" } }),
      ).get,
    });
    await expect(client.blob("sha256:c")).rejects.toThrow(/redirects to http:; refusing it/);
  });
});

describe("pull helpers", () => {
  it("chains layer IDs as the OCI image spec does: ChainID(n) = sha256(ChainID(n-1) + ' ' + DiffID(n))", () => {
    const [a, b, c] = ["sha256:" + "a".repeat(64), "sha256:" + "b".repeat(64), "sha256:c"];
    const ab = `sha256:${createHash("sha256").update(`${a} ${b}`).digest("hex")}`;
    const abc = `sha256:${createHash("sha256").update(`${ab} ${c}`).digest("hex")}`;
    expect(chainIds([a, b, c])).toEqual([a, ab, abc]);
    expect(chainIds([])).toEqual([]);
  });

  it("names the tag or digest a reference points at", () => {
    expect(referenceTarget("127.0.0.1:5000/team/m:v1")).toBe("v1");
    expect(referenceTarget("127.0.0.1:5000/team/m")).toBe("latest");
    expect(referenceTarget(`ghcr.io/a/b@sha256:${"0".repeat(64)}`)).toBe(
      `sha256:${"0".repeat(64)}`,
    );
  });

  it("picks the host's platform from an index", () => {
    const d = (c: string, architecture: string) => ({
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      digest: `sha256:${c.repeat(64)}`,
      size: 1,
      platform: { os: "linux", architecture },
    });
    const index = { manifests: [d("1", "arm64"), d("2", "amd64")] };
    expect(platformManifest(index, { os: "linux", architecture: "amd64" })?.digest).toBe(
      `sha256:${"2".repeat(64)}`,
    );
    expect(platformManifest(index, { os: "linux", architecture: "s390x" })).toBeUndefined();
  });
});
