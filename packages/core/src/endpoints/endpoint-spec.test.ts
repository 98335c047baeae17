import { describe, expect, it } from "vitest";
import { parseInput } from "../errors/index.ts";
import {
  clampDesired,
  CreateEndpointInput,
  scalingBoundsProblem,
  UpdateEndpointInput,
} from "./endpoint-spec.ts";

const deployment = {
  imageRef: "registry.example.com/vllm:1",
  imageBytes: 1_000_000_000,
  modelSource: "hf://meta-llama/Llama-3.2-3B-Instruct",
  modelBytes: 6_430_000_000,
  modelFormat: "safetensors",
  engine: "vllm",
};
const endpoint = { slug: "llama", name: "Llama", gpuType: "L40S", deployment };

describe("scaling bounds", () => {
  it("accepts min ≤ desired ≤ max and blames the field that breaks it", () => {
    expect(scalingBoundsProblem({ minReplicas: 0, maxReplicas: 0 })).toBeNull();
    expect(scalingBoundsProblem({ minReplicas: 1, maxReplicas: 4, desiredReplicas: 4 })).toBeNull();
    expect(scalingBoundsProblem({ minReplicas: 3, maxReplicas: 2 })?.field).toBe("minReplicas");
    expect(
      scalingBoundsProblem({ minReplicas: 1, maxReplicas: 2, desiredReplicas: 3 })?.field,
    ).toBe("desiredReplicas");
  });

  it("clamps a desired count into new bounds", () => {
    expect(clampDesired(5, 0, 3)).toBe(3);
    expect(clampDesired(0, 2, 3)).toBe(2);
    expect(clampDesired(2, 1, 3)).toBe(2);
  });

  it("a create names the failing field, with defaults filled in", () => {
    expect(CreateEndpointInput.parse(endpoint)).toMatchObject({
      gpuCount: 1,
      minReplicas: 0,
      maxReplicas: 1,
      objective: "mean",
      allowedPaths: ["warm", "wake", "restore", "peer", "lazy", "pull"],
      targetConcurrency: 8,
      deployment: { engineArgs: [] },
    });
    const field = (input: object) => {
      try {
        parseInput(CreateEndpointInput, input, "body");
        return null;
      } catch (error) {
        return (error as { details: { field: string } }).details.field;
      }
    };
    expect(field({ ...endpoint, minReplicas: 3, maxReplicas: 2 })).toBe("body.minReplicas");
    expect(field({ ...endpoint, maxReplicas: 2, desiredReplicas: 3 })).toBe("body.desiredReplicas");
    expect(field({ ...endpoint, maxReplicas: 0 })).toBe("body.maxReplicas");
    expect(field({ ...endpoint, allowedPaths: [] })).toBe("body.allowedPaths");
    expect(field({ ...endpoint, allowedPaths: ["teleport"] })).toBe("body.allowedPaths.0");
    expect(field({ ...endpoint, allowedPaths: ["warm", "warm"] })).toBe("body.allowedPaths");
    expect(field({ ...endpoint, objective: "p99" })).toBe("body.objective");
    expect(field({ ...endpoint, gpuType: "<script>" })).toBe("body.gpuType");
    expect(field({ ...endpoint, slug: "Bad Slug" })).toBe("body.slug");
    expect(field({ ...endpoint, orgId: crypto.randomUUID() })).toBe("body.orgId");
    expect(field({ ...endpoint, maxReplicas: Number.NaN })).toBe("body.maxReplicas");
    expect(field({ ...endpoint, maxReplicas: Infinity })).toBe("body.maxReplicas");
    expect(field({ ...endpoint, maxReplicas: 2 ** 53 + 1 })).toBe("body.maxReplicas");
    expect(field({ ...endpoint, deployment: { ...deployment, id: "x" } })).toBe(
      "body.deployment.id",
    );
  });

  it("an update must change something, and only what may change", () => {
    expect(UpdateEndpointInput.safeParse({}).success).toBe(false);
    expect(UpdateEndpointInput.safeParse({ slug: "renamed" }).success).toBe(false);
    expect(UpdateEndpointInput.parse({ objective: "p90" })).toEqual({ objective: "p90" });
  });
});

describe("names are text that reads as it is", () => {
  it("refuses lone surrogates, bidirectional overrides and zero-width characters", async () => {
    const { plainText } = await import("@thaw/protocol");
    const name = plainText(100);
    expect(name.safeParse("Llama \uD83E\uDD99 8B").success).toBe(true); // a whole emoji
    for (const bad of ["x\uD800", "\uDC00x", "abc\u202Egpj.exe", "ad\u200Bmin", "na\uFEFFme"])
      expect(name.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
  });
});
