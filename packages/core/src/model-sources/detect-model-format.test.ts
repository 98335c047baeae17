import { describe, expect, it } from "vitest";
import {
  detectModelFormat,
  filesOfNamedFile,
  formatOfFile,
  shardsOfIndex,
} from "./detect-model-format.ts";
import { MODEL_FORMAT, MODEL_FORMATS } from "./model-artifact.ts";

describe("detectModelFormat", () => {
  it("takes a sharded safetensors checkpoint, its index, and not the other copies", () => {
    const llama = [
      ".gitattributes",
      "config.json",
      "model-00001-of-00002.safetensors",
      "model-00002-of-00002.safetensors",
      "model.safetensors.index.json",
      "original/consolidated.00.pth",
      "tokenizer.json",
    ];
    expect(detectModelFormat(llama)).toEqual({
      kind: "weights",
      format: "safetensors",
      sharded: true,
      weightFiles: ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"],
      indexFile: "model.safetensors.index.json",
    });
  });

  it("prefers safetensors to the pytorch .bin and the onnx export beside it", () => {
    const detection = detectModelFormat([
      "pytorch_model.bin",
      "model.safetensors",
      "onnx/model.onnx",
      "training_args.bin",
    ]);
    expect(detection).toMatchObject({
      format: "safetensors",
      sharded: false,
      weightFiles: ["model.safetensors"],
      indexFile: null,
    });
  });

  it("reads pytorch checkpoints (sharded with their own index) but no other *.bin", () => {
    expect(
      detectModelFormat([
        "pytorch_model-00001-of-00002.bin",
        "pytorch_model-00002-of-00002.bin",
        "pytorch_model.bin.index.json",
        "training_args.bin",
      ]),
    ).toMatchObject({
      format: "pytorch",
      sharded: true,
      indexFile: "pytorch_model.bin.index.json",
    });
    expect(detectModelFormat(["training_args.bin", "README.md"])).toEqual({ kind: "none" });
  });

  it("takes an onnx graph with its external data", () => {
    expect(detectModelFormat(["model.onnx", "model.onnx_data", "config.json"])).toMatchObject({
      format: "onnx",
      sharded: true,
      weightFiles: ["model.onnx", "model.onnx_data"],
    });
  });

  it("takes one GGUF, or one split GGUF set, as the model", () => {
    expect(detectModelFormat(["Llama-Q8_0.gguf", "README.md"])).toMatchObject({
      format: "gguf",
      sharded: false,
      weightFiles: ["Llama-Q8_0.gguf"],
    });
    expect(
      detectModelFormat(["big-Q4_K_M-00002-of-00002.gguf", "big-Q4_K_M-00001-of-00002.gguf"]),
    ).toMatchObject({ format: "gguf", sharded: true });
  });

  it("calls a repo of GGUF quantisations ambiguous and names one file of each", () => {
    expect(
      detectModelFormat([
        "m-Q4_K_M.gguf",
        "m-Q8_0.gguf",
        "m-F16-00002-of-00002.gguf",
        "m-F16-00001-of-00002.gguf",
      ]),
    ).toEqual({
      kind: "ambiguous",
      format: "gguf",
      choices: ["m-Q4_K_M.gguf", "m-Q8_0.gguf", "m-F16-00001-of-00002.gguf"],
    });
  });

  it("takes every component of a diffusers repo, whose weights all sit in folders", () => {
    expect(
      detectModelFormat([
        "model_index.json",
        "unet/diffusion_pytorch_model.safetensors",
        "vae/diffusion_pytorch_model.safetensors",
      ]),
    ).toMatchObject({
      format: "safetensors",
      sharded: true,
      weightFiles: [
        "unet/diffusion_pytorch_model.safetensors",
        "vae/diffusion_pytorch_model.safetensors",
      ],
    });
  });

  it("finds nothing in a repo without weights", () => {
    expect(detectModelFormat([])).toEqual({ kind: "none" });
    expect(detectModelFormat(["README.md", "config.json"])).toEqual({ kind: "none" });
  });
});

describe("formatOfFile", () => {
  it("names a file's format by its extension", () => {
    expect(formatOfFile("a/b/model.safetensors")).toBe("safetensors");
    expect(formatOfFile("Llama-3.2-1B-Instruct-Q8_0.gguf")).toBe("gguf");
    expect(formatOfFile("weights.bin")).toBe("pytorch");
    expect(formatOfFile("ckpt.PTH")).toBe("pytorch");
    expect(formatOfFile("model.onnx")).toBe("onnx");
    expect(formatOfFile("weights.tar")).toBe("unknown");
  });

  it("only ever names a format the artifact schema accepts", () => {
    for (const format of MODEL_FORMATS) expect(format).toMatch(MODEL_FORMAT);
  });
});

describe("filesOfNamedFile", () => {
  const paths = [
    "x-00001-of-00003.gguf",
    "x-00002-of-00003.gguf",
    "x-00003-of-00003.gguf",
    "y.gguf",
  ];
  it("brings a split GGUF's whole set", () => {
    expect(filesOfNamedFile("x-00001-of-00003.gguf", paths)).toEqual(paths.slice(0, 3));
  });
  it("keeps any other file alone", () => {
    expect(filesOfNamedFile("y.gguf", paths)).toEqual(["y.gguf"]);
  });
});

describe("a transformers shard index", () => {
  const index = {
    metadata: { total_size: 6_425_499_648 },
    weight_map: {
      "lm_head.weight": "model-00002-of-00002.safetensors",
      "model.embed_tokens.weight": "model-00001-of-00002.safetensors",
      "model.norm.weight": "model-00002-of-00002.safetensors",
    },
  };
  it("names its shards once each, relative to its folder", () => {
    expect(shardsOfIndex(index, "model.safetensors.index.json")).toEqual([
      "model-00002-of-00002.safetensors",
      "model-00001-of-00002.safetensors",
    ]);
    expect(shardsOfIndex(index, "text_encoder/model.safetensors.index.json")).toEqual([
      "text_encoder/model-00002-of-00002.safetensors",
      "text_encoder/model-00001-of-00002.safetensors",
    ]);
  });
  it("is not one without a weight map of file names", () => {
    expect(shardsOfIndex({}, "i.json")).toBeNull();
    expect(shardsOfIndex({ weight_map: { a: 3 } }, "i.json")).toBeNull();
    expect(shardsOfIndex(null, "i.json")).toBeNull();
  });
});
