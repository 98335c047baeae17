import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppError } from "../errors/index.ts";
import { sizeHttpsModelSource } from "./https-model-source.ts";
import { sizeModelSource } from "./size-model-source.ts";

// https:// sizing through the public-address fetcher. A local server is on loopback, which
// the fetcher refuses unless the operator trusts the host, so the sizing paths are tested
// with the server trusted; the refusal is tested without.

const GB = 1_000_000_000;

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (e: unknown) => e as AppError,
  );

describe("https:// model sources", () => {
  let server: http.Server;
  let host: string;
  const seen: string[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.range ?? "-"}`);
      switch (req.url) {
        // A plain file server: HEAD says the length.
        case "/files/Llama-3.2-1B-Instruct-Q8_0.gguf":
          res.writeHead(200, { "content-length": String(1.3 * GB), etag: '"abc123"' });
          return void res.end();
        // An S3 presigned URL: signed for GET, so HEAD is refused; a Range GET is answered.
        case "/presigned/model.safetensors?X-Amz-Signature=x":
          if (req.method === "HEAD") {
            res.writeHead(403);
            return void res.end();
          }
          res.writeHead(206, { "content-range": `bytes 0-0/${5 * GB}`, "content-length": "1" });
          return void res.end("x");
        // A download link that redirects to the file.
        case "/download/42":
          res.writeHead(302, { location: "/files/Llama-3.2-1B-Instruct-Q8_0.gguf" });
          return void res.end();
        // Neither HEAD nor Range: the whole 2 GB would follow.
        case "/stream/model.bin":
          res.writeHead(req.method === "HEAD" ? 405 : 200, {
            "content-length": String(2 * GB),
          });
          return void res.end();
        case "/slow/model.gguf":
          return;
        default:
          res.writeHead(404);
          res.end();
      }
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const sizeTrusted = (path: string, timeoutMs = 5_000) =>
    sizeHttpsModelSource({
      source: `http://${host}${path}`,
      url: new URL(`http://${host}${path}`),
      config: { trustedHosts: new Set([host]) },
      timeoutMs,
    });

  it("never asks a loopback host the operator does not trust, and says why", async () => {
    seen.length = 0;
    const byPolicy = await refusal(
      sizeModelSource({ source: `https://${host}/files/m.gguf`, config: {} }),
    );
    expect(byPolicy).toMatchObject({
      code: "UNPROCESSABLE",
      details: { field: "modelSource", problem: "invalid" },
    });
    expect(byPolicy?.message).toContain("127.0.0.1 is a loopback");

    // Past the text policy (a public name that resolves to loopback ends here too).
    const byFetcher = await refusal(
      sizeHttpsModelSource({
        source: `https://${host}/files/m.gguf`,
        url: new URL(`https://${host}/files/m.gguf`),
        config: {},
        timeoutMs: 5_000,
      }),
    );
    expect(byFetcher).toMatchObject({ code: "UNPROCESSABLE", details: { problem: "invalid" } });
    expect(byFetcher?.message).toContain("public hosts only");
    expect(seen).toEqual([]);
  });

  it("sizes a file with HEAD", async () => {
    seen.length = 0;
    expect(await sizeTrusted("/files/Llama-3.2-1B-Instruct-Q8_0.gguf")).toEqual({
      source: `http://${host}/files/Llama-3.2-1B-Instruct-Q8_0.gguf`,
      totalBytes: 1.3 * GB,
      format: "gguf",
      sharded: false,
      files: [{ path: "Llama-3.2-1B-Instruct-Q8_0.gguf", bytes: 1.3 * GB }],
      fileCount: 1,
      revision: "abc123",
    });
    expect(seen).toEqual(["HEAD /files/Llama-3.2-1B-Instruct-Q8_0.gguf -"]);
  });

  it("falls back to a one-byte Range GET where HEAD is refused", async () => {
    seen.length = 0;
    expect(await sizeTrusted("/presigned/model.safetensors?X-Amz-Signature=x")).toMatchObject({
      totalBytes: 5 * GB,
      format: "safetensors",
      files: [{ path: "model.safetensors", bytes: 5 * GB }],
    });
    expect(seen).toEqual([
      "HEAD /presigned/model.safetensors?X-Amz-Signature=x -",
      "GET /presigned/model.safetensors?X-Amz-Signature=x bytes=0-0",
    ]);
  });

  it("names the format from where a download link lands", async () => {
    expect(await sizeTrusted("/download/42")).toMatchObject({
      totalBytes: 1.3 * GB,
      format: "gguf",
      files: [{ path: "Llama-3.2-1B-Instruct-Q8_0.gguf", bytes: 1.3 * GB }],
    });
  });

  it("says what is wrong: no file, no size, no answer", async () => {
    const missing = await refusal(sizeTrusted("/nothing.gguf"));
    expect(missing).toMatchObject({ code: "UNPROCESSABLE", details: { problem: "not-found" } });

    const noSize = await refusal(sizeTrusted("/stream/model.bin"));
    expect(noSize?.details?.problem).toBe("unsizable");
    expect(noSize?.message).toContain("give modelBytes yourself");

    const slow = await refusal(sizeTrusted("/slow/model.gguf", 300));
    expect(slow).toMatchObject({ code: "UNPROCESSABLE", details: { problem: "timeout" } });
    expect(slow?.message).toMatch(/did not answer within 0.3 s/);
  });
});
