import { describe, expect, it } from "vitest";
import { AppError } from "../errors/index.ts";
import { parseModelSource } from "./parse-model-source.ts";
import { sizeModelSource } from "./size-model-source.ts";

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (e: unknown) => e as AppError,
  );

describe("sizeModelSource", () => {
  it("refuses a source the policy refuses, on the modelSource field, before any request", async () => {
    const error = await refusal(sizeModelSource({ source: "ftp://x/y", config: {} }));
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({
      code: "UNPROCESSABLE",
      details: { field: "modelSource", problem: "invalid" },
    });
    expect(error?.message).toMatch(/^modelSource: use one of hf:\/\//);
    const loopback = await refusal(
      sizeModelSource({ source: "https://127.0.0.1/model.gguf", config: {} }),
    );
    expect(loopback?.details?.problem).toBe("invalid");
  });

  it("says gs:// cannot be sized yet and what to do", async () => {
    const error = await refusal(sizeModelSource({ source: "gs://bucket/model", config: {} }));
    expect(error).toMatchObject({ code: "UNPROCESSABLE", details: { problem: "unsizable" } });
    expect(error?.message).toBe("modelSource: gs:// sizing is not supported yet; give modelBytes");
  });
});

describe("parseModelSource", () => {
  it("takes each scheme apart", () => {
    expect(parseModelSource("hf://meta-llama/Llama-3.2-3B-Instruct")).toEqual({
      scheme: "hf",
      repo: "meta-llama/Llama-3.2-3B-Instruct",
      path: null,
    });
    expect(parseModelSource("hf://o/r/sub/model.gguf")).toEqual({
      scheme: "hf",
      repo: "o/r",
      path: "sub/model.gguf",
    });
    expect(parseModelSource("hf://o/r/")).toMatchObject({ path: null });
    expect(parseModelSource("s3://bucket")).toEqual({ scheme: "s3", bucket: "bucket", key: "" });
    expect(parseModelSource("s3://bucket/a/b/")).toEqual({
      scheme: "s3",
      bucket: "bucket",
      key: "a/b/",
    });
    expect(parseModelSource("https://example.com/m.gguf")).toMatchObject({ scheme: "https" });
  });
});
