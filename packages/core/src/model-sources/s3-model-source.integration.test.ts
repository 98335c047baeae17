import {
  CreateBucketCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../errors/index.ts";
import { startMotoServer, type MotoServer } from "../testing/moto-server.ts";
import { sizeModelSource } from "./size-model-source.ts";

// s3:// sizing against moto's S3 with the real SDK: an object by HeadObject, a sharded prefix
// by ListObjectsV2 (paginated), and the refusals.

const credentials = { accessKeyId: "testing", secretAccessKey: "testing" };

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (e: unknown) => e as AppError,
  );

describe("s3:// model sources (moto)", () => {
  let moto: MotoServer | undefined;
  let admin: S3Client;
  let config: { s3: { region: string; endpoint: string; forcePathStyle: boolean } };
  const size = (source: string) =>
    sizeModelSource({ source, config, credentials: { s3: credentials } });
  const put = (Bucket: string, Key: string, bytes: number) =>
    admin.send(new PutObjectCommand({ Bucket, Key, Body: Buffer.alloc(bytes, 1) }));

  beforeAll(async () => {
    moto = await startMotoServer();
    config = { s3: { region: "us-east-1", endpoint: moto.endpoint, forcePathStyle: true } };
    admin = new S3Client({ ...config.s3, credentials });
    await admin.send(new CreateBucketCommand({ Bucket: "models" }));
    await admin.send(
      new PutBucketVersioningCommand({
        Bucket: "models",
        VersioningConfiguration: { Status: "Enabled" },
      }),
    );
    await put("models", "gguf/Llama-3.2-1B-Instruct-Q8_0.gguf", 1_300);
    await put("models", "llama/config.json", 20);
    await put("models", "llama/model-00001-of-00002.safetensors", 5_000);
    await put("models", "llama/model-00002-of-00002.safetensors", 2_500);
    await put("models", "llama/model.safetensors.index.json", 300);
    await put("models", "quants/m-Q4_K_M.gguf", 10);
    await put("models", "quants/m-Q8_0.gguf", 20);
    await put("models", "empty.safetensors", 0);
    // More than a ListObjectsV2 page (1,000), in batches the SDK's 50 sockets take at once.
    for (let batch = 0; batch < 1_005; batch += 50)
      await Promise.all(
        Array.from({ length: Math.min(50, 1_005 - batch) }, (_, i) =>
          put("models", `many/part-${String(batch + i).padStart(5, "0")}.onnx_data`, 2),
        ),
      );
  }, 120_000);

  afterAll(async () => {
    admin?.destroy();
    await moto?.stop();
  });

  it("sizes one object with HeadObject, pinned to its version", async () => {
    const artifact = await size("s3://models/gguf/Llama-3.2-1B-Instruct-Q8_0.gguf");
    expect(artifact).toMatchObject({
      source: "s3://models/gguf/Llama-3.2-1B-Instruct-Q8_0.gguf",
      totalBytes: 1_300,
      format: "gguf",
      sharded: false,
      files: [{ path: "Llama-3.2-1B-Instruct-Q8_0.gguf", bytes: 1_300 }],
      fileCount: 1,
    });
    expect(artifact.revision).toMatch(/\S/);
  });

  it("sizes a sharded prefix, named with or without its slash, as everything below it", async () => {
    for (const source of ["s3://models/llama/", "s3://models/llama"]) {
      const artifact = await size(source);
      expect(artifact).toMatchObject({
        totalBytes: 20 + 5_000 + 2_500 + 300,
        format: "safetensors",
        sharded: true,
        fileCount: 4,
      });
      expect(artifact.files.map((f) => f.path).sort()).toEqual([
        "config.json",
        "model-00001-of-00002.safetensors",
        "model-00002-of-00002.safetensors",
        "model.safetensors.index.json",
      ]);
    }
  });

  it("pages through a long listing and caps the files it lists", async () => {
    const artifact = await size("s3://models/many/");
    expect(artifact).toMatchObject({ totalBytes: 2 * 1_005, fileCount: 1_005, format: "onnx" });
    expect(artifact.files).toHaveLength(1_000);
  });

  it("says what is wrong with a missing key, a missing bucket, an empty object, a folder of quants", async () => {
    const missing = await refusal(size("s3://models/nothing/here.gguf"));
    expect(missing).toMatchObject({
      code: "UNPROCESSABLE",
      details: { field: "modelSource", problem: "not-found" },
    });
    expect(missing?.message).toContain("no object s3://models/nothing/here.gguf");

    const noBucket = await refusal(size("s3://no-such-bucket/model.gguf"));
    expect(noBucket?.details?.problem).toBe("not-found");
    expect(noBucket?.message).toContain("no bucket no-such-bucket");

    expect((await refusal(size("s3://models/empty.safetensors")))?.details?.problem).toBe("empty");

    const quants = await refusal(size("s3://models/quants/"));
    expect(quants?.details?.problem).toBe("ambiguous");
    expect(quants?.message).toContain("name one object: s3://models/quants/<file>");
  });

  it("says so when S3 does not answer in time", async () => {
    const error = await refusal(
      sizeModelSource({
        source: "s3://models/llama/",
        config: { ...config, timeoutMs: 1 },
        credentials: { s3: credentials },
      }),
    );
    expect(error).toMatchObject({ code: "UNPROCESSABLE", details: { problem: "timeout" } });
    expect(error?.message).toMatch(/did not answer within 0.001 s/);
  });

  it("passes the caller's abort through as it came", async () => {
    const controller = new AbortController();
    controller.abort(new Error("request closed"));
    const error = await refusal(
      sizeModelSource({
        source: "s3://models/llama/",
        config,
        credentials: { s3: credentials },
        signal: controller.signal,
      }),
    );
    expect(error).not.toBeInstanceOf(AppError);
  });
});
