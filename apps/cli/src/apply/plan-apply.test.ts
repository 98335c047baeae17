import { describe, expect, it } from "vitest";
import type { Schemas } from "../api.ts";
import { planApply, PlanError, renderDiff, type EndpointFile } from "./plan-apply.ts";

const file: EndpointFile = {
  slug: "qwen-7b",
  name: "Qwen 2.5 7B",
  gpuType: "L40S",
  maxReplicas: 2,
  deployment: {
    imageRef: "registry.example.com/vllm-openai:v0.11.0",
    imageBytes: 7_700_000_000,
    modelSource: "hf://Qwen/Qwen2.5-7B-Instruct",
    modelBytes: 15_200_000_000,
    modelFormat: "safetensors",
    engine: "vllm",
    engineProfile: { warmupSeconds: 12 },
  },
};

/** The endpoint as the API answers it after creating `file` (defaults filled in). */
const existing = (over: Partial<Schemas["Endpoint"]> = {}): Schemas["Endpoint"] => ({
  id: "0193aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee",
  slug: "qwen-7b",
  name: "Qwen 2.5 7B",
  gpuType: "L40S",
  gpuCount: 1,
  minReplicas: 0,
  maxReplicas: 2,
  desiredReplicas: 1,
  scaleToZeroIdleSeconds: 300,
  allowedPaths: ["warm", "restore", "lazy", "pull"],
  objective: "mean",
  targetConcurrency: 8,
  gpuSecondsPerWaitSecond: null,
  effectiveGpuSecondsPerWaitSecond: { value: null, source: "platform" },
  version: 1,
  createdAt: "",
  updatedAt: "",
  activeDeployment: {
    id: "0193aaaa-bbbb-7ccc-8ddd-000000000001",
    endpointId: "0193aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee",
    version: 1,
    status: "active",
    imageRef: "registry.example.com/vllm-openai:v0.11.0",
    imageDigest: `sha256:${"a".repeat(64)}`,
    imageBytes: 7_700_000_000,
    imageLayers: [],
    estargzImageRef: null,
    estargzDigest: null,
    modelSource: "hf://Qwen/Qwen2.5-7B-Instruct",
    modelBytes: 15_200_000_000,
    modelFormat: "safetensors",
    engine: "vllm",
    engineArgs: [],
    engineProfile: { warmupSeconds: 12, compileSeconds: 27, loader: "sequential" },
    createdAt: "",
  },
  ...over,
});

describe("planApply", () => {
  it("creates an endpoint that does not exist, with the whole file", () => {
    const plan = planApply(file, null);
    expect(plan).toMatchObject({ action: "create", body: file });
    expect(renderDiff("qwen-7b", plan)).toMatch(
      /^\+ endpoint qwen-7b \(new\)\n {2}\+ slug: qwen-7b/,
    );
  });

  it("changes nothing when the file matches what the API holds (defaults and profile keys aside)", () => {
    const plan = planApply(file, existing());
    expect(plan).toEqual({ action: "update", patch: null, roll: null, diff: [] });
    expect(renderDiff("qwen-7b", plan)).toBe("= endpoint qwen-7b: no changes");
  });

  it("patches only the configuration fields that differ, and rolls nothing", () => {
    const plan = planApply({ ...file, maxReplicas: 4, objective: "p90" }, existing());
    expect(plan).toMatchObject({ patch: { maxReplicas: 4, objective: "p90" }, roll: null });
    expect(renderDiff("qwen-7b", plan)).toBe(
      "~ endpoint qwen-7b (configuration)\n  ~ maxReplicas: 2 → 4\n  ~ objective: mean → p90",
    );
  });

  it("carries the price of waiting: set, changed, and back to the org's default with null", () => {
    const set = planApply({ ...file, gpuSecondsPerWaitSecond: 12 }, existing());
    expect(set).toMatchObject({ patch: { gpuSecondsPerWaitSecond: 12 }, roll: null });
    expect(renderDiff("qwen-7b", set)).toBe(
      "~ endpoint qwen-7b (configuration)\n  ~ gpuSecondsPerWaitSecond: (none) → 12",
    );
    const own = existing({
      gpuSecondsPerWaitSecond: 12,
      effectiveGpuSecondsPerWaitSecond: { value: 12, source: "endpoint" },
    });
    expect(planApply({ ...file, gpuSecondsPerWaitSecond: 12 }, own)).toMatchObject({
      patch: null,
    });
    // A file that leaves it out leaves the endpoint's own price alone.
    expect(planApply(file, own)).toMatchObject({ patch: null });
    expect(planApply({ ...file, gpuSecondsPerWaitSecond: null }, own)).toMatchObject({
      patch: { gpuSecondsPerWaitSecond: null },
    });
    expect(planApply({ ...file, gpuSecondsPerWaitSecond: 20 }, own).diff).toEqual([
      { kind: "change", field: "gpuSecondsPerWaitSecond", from: 12, to: 20 },
    ]);
  });

  it("rolls a new deployment when a deployment field the file sets differs", () => {
    const changed = { ...file, deployment: { ...file.deployment, imageRef: "r.example.com/x:v2" } };
    const plan = planApply(changed, existing());
    expect(plan).toMatchObject({ patch: null, roll: changed.deployment });
    expect(plan.diff).toEqual([
      {
        kind: "change",
        field: "deployment.imageRef",
        from: "registry.example.com/vllm-openai:v0.11.0",
        to: "r.example.com/x:v2",
      },
    ]);
    const profile = {
      ...file,
      deployment: { ...file.deployment, engineProfile: { warmupSeconds: 5 } },
    };
    expect(planApply(profile, existing())).toMatchObject({ roll: profile.deployment });
  });

  it("ignores desiredReplicas on an existing endpoint (autoscalers own it)", () => {
    expect(planApply({ ...file, desiredReplicas: 2 }, existing())).toMatchObject({
      patch: null,
      roll: null,
    });
  });

  it("refuses to change what is fixed at creation, naming the field", () => {
    expect(() => planApply({ ...file, gpuType: "A10G" }, existing())).toThrow(PlanError);
    expect(() => planApply({ ...file, gpuType: "l40s" }, existing())).not.toThrow();
  });
});
