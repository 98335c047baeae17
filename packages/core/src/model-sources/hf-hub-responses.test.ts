import { describe, expect, it } from "vitest";
import {
  encodeRepoPath,
  filesOfModelInfo,
  HubModelInfo,
  hubErrorCode,
  isGated,
  modelInfoUrl,
  resolveUrl,
} from "./hf-hub-responses.ts";

describe("the Hub's model info", () => {
  // The shape of GET /api/models/{repo}?blobs=true, trimmed.
  const answer = {
    _id: "66e8",
    id: "meta-llama/Llama-3.2-1B",
    sha: "4e20de362430cd3b72f300e6b0f18e50e7166e08",
    gated: "manual",
    private: false,
    tags: ["safetensors"],
    siblings: [
      { rfilename: ".gitattributes", blobId: "a", size: 1519 },
      {
        rfilename: "model.safetensors",
        blobId: "b",
        size: 2471645608,
        lfs: { sha256: "c", size: 2471645608, pointerSize: 135 },
      },
      { rfilename: "config.json" },
      { rfilename: "old.bin", lfs: { size: 99 } },
    ],
  };

  it("gives each file's bytes, from size or from lfs, and undefined when absent", () => {
    const info = HubModelInfo.parse(answer);
    expect([...filesOfModelInfo(info)]).toEqual([
      [".gitattributes", 1519],
      ["model.safetensors", 2471645608],
      ["config.json", undefined],
      ["old.bin", 99],
    ]);
    expect(info.sha).toBe(answer.sha);
    expect(isGated(info)).toBe(true);
    expect(isGated(HubModelInfo.parse({ gated: false }))).toBe(false);
    expect(HubModelInfo.parse({}).siblings).toEqual([]);
  });

  it("refuses an answer that is not model info", () => {
    expect(HubModelInfo.safeParse({ siblings: [{ size: 3 }] }).success).toBe(false);
    expect(HubModelInfo.safeParse("<html>").success).toBe(false);
  });
});

describe("Hub URLs", () => {
  it("asks for blobs, at a revision encoded as one segment", () => {
    expect(modelInfoUrl("https://huggingface.co/", "o/r", undefined)).toBe(
      "https://huggingface.co/api/models/o/r?blobs=true",
    );
    expect(modelInfoUrl("https://hf-mirror.example", "o/r", "refs/pr/1")).toBe(
      "https://hf-mirror.example/api/models/o/r/revision/refs%2Fpr%2F1?blobs=true",
    );
  });
  it("resolves a file with its folders kept", () => {
    expect(
      resolveUrl("https://huggingface.co", "o/r", "main", "sub dir/model.safetensors.index.json"),
    ).toBe("https://huggingface.co/o/r/resolve/main/sub%20dir/model.safetensors.index.json");
    expect(encodeRepoPath("a#b/c?d")).toBe("a%23b/c%3Fd");
  });
  it("reads the Hub's error code", () => {
    expect(hubErrorCode(new Headers({ "x-error-code": "GatedRepo" }))).toBe("GatedRepo");
    expect(hubErrorCode(new Headers({ "x-error-code": "Other" }))).toBeNull();
    expect(hubErrorCode(new Headers())).toBeNull();
  });
});
