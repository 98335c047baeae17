import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppError } from "../errors/index.ts";
import { sizeModelSource } from "./size-model-source.ts";

// hf:// sizing against a local stand-in for the Hugging Face Hub (the Hub is unreachable
// from here) that speaks its endpoints as huggingface_hub uses them: model info at
// /api/models/{repo}[/revision/{rev}] (file sizes only with ?blobs=true), files at
// /{repo}/resolve/{rev}/{path} (LFS files redirected to a CDN), gated repos whose info is
// public and files need a token, private repos whose existence is hidden without one, and
// the Hub's X-Error-Code on every refusal.

const TOKEN = "hf_org_token";
/** A valid token whose account has not accepted the gated model's terms. */
const NOT_ACCEPTED = "hf_not_accepted";
const SHA = "4e20de362430cd3b72f300e6b0f18e50e7166e08";
const V1_SHA = "0000000000000000000000000000000000000001";

interface FixtureRepo {
  gated?: "manual";
  private?: boolean;
  /** Revision name → files (path → body or bytes of a blob). */
  revisions: Record<string, { sha: string; files: Record<string, string | number> }>;
}

const index = (shards: Record<string, string>) =>
  JSON.stringify({ metadata: { total_size: 7_400 }, weight_map: shards });

const REPOS: Record<string, FixtureRepo> = {
  "acme/llama": {
    revisions: {
      main: {
        sha: SHA,
        files: {
          ".gitattributes": 1_519,
          "config.json": 800,
          // Mistral-style: a consolidated copy beside the shards the index names.
          "consolidated.safetensors": 7_450,
          "model-00001-of-00002.safetensors": 5_000,
          "model-00002-of-00002.safetensors": 2_500,
          "model.safetensors.index.json": index({
            "model.embed_tokens.weight": "model-00001-of-00002.safetensors",
            "lm_head.weight": "model-00002-of-00002.safetensors",
          }),
          "original/consolidated.00.pth": 7_600,
          "onnx/model.onnx": 9_000,
        },
      },
      v1: { sha: V1_SHA, files: { "pytorch_model.bin": 6_000, "config.json": 700 } },
    },
  },
  "acme/gated": {
    gated: "manual",
    revisions: { main: { sha: SHA, files: { "model.safetensors": 3_000, "config.json": 10 } } },
  },
  "acme/private": {
    private: true,
    revisions: { main: { sha: SHA, files: { "model.safetensors": 4_000 } } },
  },
  "acme/quants-GGUF": {
    revisions: {
      main: {
        sha: SHA,
        files: {
          "m-Q4_K_M.gguf": 400,
          "m-Q8_0.gguf": 800,
          "m-F16-00001-of-00002.gguf": 900,
          "m-F16-00002-of-00002.gguf": 700,
          "README.md": 5,
        },
      },
    },
  },
};

const bytesOf = (content: string | number) =>
  typeof content === "number" ? content : Buffer.byteLength(content);

function hub(req: http.IncomingMessage, res: http.ServerResponse, seen: string[]): void {
  const url = new URL(req.url ?? "/", "http://hub");
  const auth = req.headers.authorization;
  seen.push(`${req.method} ${url.pathname}${url.search} ${auth ? "token" : "-"}`);
  const refuse = (status: number, code: string) => {
    res.writeHead(status, { "x-error-code": code, "content-type": "application/json" });
    res.end(JSON.stringify({ error: code }));
  };
  if (url.pathname.startsWith("/cdn/")) return void res.end();
  if (auth && auth !== `Bearer ${TOKEN}` && auth !== `Bearer ${NOT_ACCEPTED}`)
    return refuse(401, "InvalidCredentials");

  const info = /^\/api\/models\/([^/]+\/[^/]+)(?:\/revision\/([^/]+))?$/.exec(url.pathname);
  const resolve = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
  const [, repoId = "", rawRev = "main"] = info ?? resolve ?? [];
  if (repoId === "acme/slow") return; // never answers
  const repo = REPOS[repoId];
  // The Hub answers 401 for a repo it will not show: missing and private look the same.
  if (!repo || (repo.private && !auth)) return refuse(auth ? 404 : 401, "RepoNotFound");
  const revision = decodeURIComponent(rawRev);
  const at =
    Object.values(repo.revisions).find((r) => r.sha === revision) ?? repo.revisions[revision];
  if (!at) return refuse(404, "RevisionNotFound");

  if (info) {
    res.writeHead(200, { "content-type": "application/json" });
    return void res.end(
      JSON.stringify({
        id: repoId,
        sha: at.sha,
        gated: repo.gated ?? false,
        private: repo.private ?? false,
        siblings: Object.entries(at.files).map(([rfilename, content]) =>
          url.searchParams.get("blobs") === "true"
            ? { rfilename, size: bytesOf(content), blobId: "b" }
            : { rfilename },
        ),
      }),
    );
  }
  if (resolve) {
    if (repo.gated && !auth) return refuse(401, "GatedRepo");
    if (repo.gated && auth !== `Bearer ${TOKEN}`) return refuse(403, "GatedRepo");
    const path = decodeURIComponent(resolve[3]!);
    const content = at.files[path];
    if (content === undefined) return refuse(404, "EntryNotFound");
    if (typeof content === "number") {
      res.writeHead(302, { location: `/cdn/${at.sha}/${path}` });
      return void res.end();
    }
    res.writeHead(200, { "content-type": "application/json" });
    return void res.end(req.method === "HEAD" ? undefined : content);
  }
  res.writeHead(404);
  res.end();
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (e: unknown) => e as AppError,
  );

describe("hf:// model sources (a local Hub)", () => {
  let server: http.Server;
  let endpoint: string;
  const seen: string[] = [];
  const size = (
    source: string,
    extra: { token?: string; revision?: string; timeoutMs?: number } = {},
  ) =>
    sizeModelSource({
      source,
      config: { huggingFace: { endpoint }, timeoutMs: extra.timeoutMs },
      credentials: { huggingFaceToken: extra.token },
      revision: extra.revision,
    });

  beforeAll(async () => {
    server = http.createServer((req, res) => hub(req, res, seen));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it("sizes a sharded safetensors repo by the shards its index names, pinned to the commit", async () => {
    seen.length = 0;
    const artifact = await size("hf://acme/llama");
    expect(artifact).toEqual({
      source: "hf://acme/llama",
      totalBytes: 7_500,
      format: "safetensors",
      sharded: true,
      files: [
        { path: "model-00001-of-00002.safetensors", bytes: 5_000 },
        { path: "model-00002-of-00002.safetensors", bytes: 2_500 },
      ],
      fileCount: 2,
      revision: SHA,
    });
    expect(seen).toEqual([
      "GET /api/models/acme/llama?blobs=true -",
      `GET /acme/llama/resolve/${SHA}/model.safetensors.index.json -`,
    ]);
  });

  it("sizes another revision, a named file, and a folder", async () => {
    seen.length = 0;
    expect(await size("hf://acme/llama", { revision: "v1" })).toMatchObject({
      totalBytes: 6_000,
      format: "pytorch",
      sharded: false,
      revision: V1_SHA,
    });
    expect(seen[0]).toBe("GET /api/models/acme/llama/revision/v1?blobs=true -");
    expect(await size("hf://acme/llama/original/consolidated.00.pth")).toMatchObject({
      totalBytes: 7_600,
      format: "pytorch",
      files: [{ path: "original/consolidated.00.pth", bytes: 7_600 }],
    });
    expect(await size("hf://acme/llama/onnx")).toMatchObject({
      totalBytes: 9_000,
      format: "onnx",
      files: [{ path: "onnx/model.onnx", bytes: 9_000 }],
    });
  });

  it("asks which GGUF of a repo of quantisations, and sizes a named split GGUF whole", async () => {
    const ambiguous = await refusal(size("hf://acme/quants-GGUF"));
    expect(ambiguous).toMatchObject({ code: "UNPROCESSABLE", details: { problem: "ambiguous" } });
    expect(ambiguous?.message).toContain("name one: hf://acme/quants-GGUF/m-Q4_K_M.gguf");
    expect(await size("hf://acme/quants-GGUF/m-Q8_0.gguf")).toMatchObject({
      totalBytes: 800,
      format: "gguf",
      sharded: false,
    });
    expect(await size("hf://acme/quants-GGUF/m-F16-00001-of-00002.gguf")).toMatchObject({
      totalBytes: 1_600,
      format: "gguf",
      sharded: true,
      fileCount: 2,
    });
  });

  it("asks for the org's token for a gated model, and checks the token may read its files", async () => {
    const without = await refusal(size("hf://acme/gated"));
    expect(without).toMatchObject({
      code: "UNPROCESSABLE",
      details: { field: "modelSource", problem: "access-denied" },
    });
    expect(without?.message).toContain("add a Hugging Face token for the org");

    seen.length = 0;
    expect(await size("hf://acme/gated", { token: TOKEN })).toMatchObject({
      totalBytes: 3_000,
      format: "safetensors",
    });
    expect(seen).toEqual([
      "GET /api/models/acme/gated?blobs=true token",
      `HEAD /acme/gated/resolve/${SHA}/model.safetensors token`,
    ]);

    const notAccepted = await refusal(size("hf://acme/gated", { token: NOT_ACCEPTED }));
    expect(notAccepted?.details?.problem).toBe("access-denied");
    expect(notAccepted?.message).toContain("accept its terms on the Hub with the token's account");

    const badToken = await refusal(size("hf://acme/gated", { token: "hf_wrong" }));
    expect(badToken?.details?.problem).toBe("access-denied");
    expect(badToken?.message).toContain("the org's Hugging Face token may not read");
  });

  it("sizes a private model with the token, and without it says gated or private", async () => {
    expect(await size("hf://acme/private", { token: TOKEN })).toMatchObject({ totalBytes: 4_000 });
    const without = await refusal(size("hf://acme/private"));
    expect(without?.details?.problem).toBe("access-denied");
    expect(without?.message).toContain(
      "gated or private model: add a Hugging Face token for the org",
    );
  });

  it("says no such model, revision or file", async () => {
    const model = await refusal(size("hf://acme/nothing", { token: TOKEN }));
    expect(model).toMatchObject({ code: "UNPROCESSABLE", details: { problem: "not-found" } });
    expect(model?.message).toContain("no such model hf://acme/nothing");
    const revision = await refusal(size("hf://acme/llama", { revision: "v9" }));
    expect(revision?.message).toContain("no revision v9 of hf://acme/llama");
    const file = await refusal(size("hf://acme/llama/nope.gguf"));
    expect(file?.message).toContain("no file or folder nope.gguf in hf://acme/llama");
  });

  it("says when the Hub does not answer in time, and when it cannot be reached", async () => {
    const slow = await refusal(size("hf://acme/slow", { timeoutMs: 300 }));
    expect(slow).toMatchObject({ code: "UNPROCESSABLE", details: { problem: "timeout" } });
    expect(slow?.message).toMatch(/did not answer within 0.3 s/);

    const down = await refusal(
      sizeModelSource({
        source: "hf://acme/llama",
        config: { huggingFace: { endpoint: "http://127.0.0.1:1" } },
      }),
    );
    expect(down).toMatchObject({ code: "UNPROCESSABLE", details: { problem: "unreachable" } });
  });
});
