import { mulberry32, PHYSICS } from "@thaw/core/cold-start-model";
import { describe, expect, it } from "vitest";
import {
  catalogueModel,
  decodeTokensPerSecond,
  drawModel,
  endpointSpecForModel,
  ENGINE_IMAGE_COMPRESSED_BYTES,
  GPU_CLASSES,
  GPU_MEMORY_PER_WEIGHT_BYTE,
  gpuPlacement,
  MODELS,
  POOL_MODELS,
  POOLS,
  serviceSeconds,
} from "./model-catalogue.ts";
import { llmServiceSeconds } from "./replay-input.ts";

describe("gpuPlacement", () => {
  it.each([
    ["meta-llama/Llama-3.2-1B-Instruct", "A10G", 1],
    ["Qwen/Qwen2.5-3B-Instruct", "A10G", 1],
    ["Qwen/Qwen2.5-7B-Instruct", "A10G", 1],
    ["meta-llama/Llama-3.1-8B-Instruct", "A10G", 1],
    ["Qwen/Qwen2-VL-7B-Instruct", "A10G", 1],
    ["Qwen/Qwen2.5-14B-Instruct", "L40S", 1],
    ["mistralai/Mistral-Small-24B-Instruct-2501", "L40S", 2],
    ["Qwen/Qwen2.5-32B-Instruct", "L40S", 2],
    ["meta-llama/Llama-3.3-70B-Instruct", "L40S", 4],
  ])("%s needs %s × %s", (id, gpuType, gpus) => {
    expect(gpuPlacement(catalogueModel(id))).toEqual({ gpuType, gpus });
  });

  it("gives every model the smallest placement whose memory holds weights × 1.2", () => {
    const capacities = [
      { gpuType: "A10G", gpus: 1, bytes: GPU_CLASSES.A10G.memoryBytes },
      ...[1, 2, 4, 8].map((gpus) => ({
        gpuType: "L40S",
        gpus,
        bytes: gpus * GPU_CLASSES.L40S.memoryBytes,
      })),
    ];
    for (const model of MODELS) {
      const need = model.weightsBytes * GPU_MEMORY_PER_WEIGHT_BYTE;
      const placement = gpuPlacement(model);
      const index = capacities.findIndex(
        (c) => c.gpuType === placement.gpuType && c.gpus === placement.gpus,
      );
      expect(capacities[index]!.bytes).toBeGreaterThanOrEqual(need);
      if (index > 0) expect(capacities[index - 1]!.bytes).toBeLessThan(need);
    }
  });
});

describe("endpointSpecForModel", () => {
  it("pulls the vLLM image's 9 GB compressed plus the weights, and reads the weights it holds", () => {
    const model = catalogueModel("Qwen/Qwen2.5-7B-Instruct");
    const spec = endpointSpecForModel(model);
    const code = spec.image.layers.filter((l) => l.content === "code");
    const compressed = code.reduce(
      (sum, l) => sum + l.bytes * PHYSICS.compressedFraction[l.compression][l.content],
      0,
    );
    expect(Math.abs(compressed - ENGINE_IMAGE_COMPRESSED_BYTES)).toBeLessThan(10);
    expect(spec.image.layers.filter((l) => l.content === "weights")).toEqual([
      { bytes: 15_231_233_024, compression: "gzip-6", content: "weights" },
    ]);
    expect(spec.engine.weightsBytes).toBe(15_231_233_024);
    // Before ready it reads the weights whole and ~0.95 GB of code, as the calibrated vLLM
    // row (field notes §3) reads 10% of its 9.5 GB image.
    const imageBytes = spec.image.layers.reduce((sum, l) => sum + l.bytes, 0);
    expect(spec.image.readFraction * imageBytes - 15_231_233_024).toBeCloseTo(950_000_000, -3);
  });

  it("snapshots one 3.4 GB sleep-level-2 engine process per GPU", () => {
    expect(endpointSpecForModel(catalogueModel("Qwen/Qwen2.5-3B-Instruct")).snapshot).toEqual({
      bytes: 3_400_000_000,
      sleepLevel: 2,
    });
    expect(
      endpointSpecForModel(catalogueModel("meta-llama/Llama-3.3-70B-Instruct")).snapshot,
    ).toEqual({ bytes: 13_600_000_000, sleepLevel: 2 });
  });

  it("takes the engine's phase times from field notes §3 (117 s to ready for the 3B)", () => {
    const { engine } = endpointSpecForModel(catalogueModel("Qwen/Qwen2.5-14B-Instruct"));
    expect(engine).toMatchObject({
      initSeconds: 9.3,
      compileSeconds: 27.03,
      graphCaptureSeconds: 34,
      warmupSeconds: 40,
      warmCaches: false,
    });
  });

  it("scales to zero and to at most 8 replicas of 8 slots", () => {
    const spec = endpointSpecForModel(catalogueModel("meta-llama/Llama-3.2-1B-Instruct"));
    expect(spec).toMatchObject({ minReplicas: 0, maxReplicas: 8, concurrency: 8, estargz: true });
  });
});

describe("serviceSeconds", () => {
  it("matches replay-input's 8B-on-A10G figures for Llama-3.1-8B on one A10G", () => {
    const model = catalogueModel("meta-llama/Llama-3.1-8B-Instruct");
    expect(serviceSeconds(model, gpuPlacement(model), 1_155, 211)).toBeCloseTo(
      llmServiceSeconds(1_155, 211),
      10,
    );
  });

  it("decodes in proportion to memory bandwidth × GPUs over weight bytes", () => {
    const small = catalogueModel("meta-llama/Llama-3.2-1B-Instruct");
    const large = catalogueModel("meta-llama/Llama-3.3-70B-Instruct");
    const smallRate = decodeTokensPerSecond(small, gpuPlacement(small));
    const largeRate = decodeTokensPerSecond(large, gpuPlacement(large));
    expect(smallRate / largeRate).toBeCloseTo(
      600e9 / small.weightsBytes / ((864e9 * 4) / large.weightsBytes),
      10,
    );
    expect(largeRate).toBeLessThan(40);
    expect(smallRate).toBeGreaterThan(40);
  });
});

describe("drawModel", () => {
  it("draws only the pool's models, in proportion to their weights", () => {
    const random = mulberry32(4);
    for (const pool of POOLS) {
      const counts = new Map<string, number>();
      const n = 20_000;
      for (let i = 0; i < n; i++) {
        const id = drawModel(pool, random).id;
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      const options = POOL_MODELS[pool];
      const total = options.reduce((sum, o) => sum + o.weight, 0);
      expect([...counts.keys()].sort()).toEqual(options.map((o) => o.model).sort());
      for (const option of options)
        expect(Math.abs(counts.get(option.model)! / n - option.weight / total)).toBeLessThan(0.015);
    }
  });
});

describe("MODELS", () => {
  it("cites a source for every size and spans 1 to 70 B", () => {
    for (const model of MODELS) expect(model.source).toMatch(/^https:\/\//);
    const params = MODELS.map((m) => m.billionParams);
    expect(Math.min(...params)).toBeLessThan(1.5);
    expect(Math.max(...params)).toBeGreaterThan(70);
  });
});
