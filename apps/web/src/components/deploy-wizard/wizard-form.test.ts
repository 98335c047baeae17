import { CreateEndpointInput, DeploymentSpec, GpuSecondsPerWaitSecond } from "@thaw/core/schemas";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  bytesOfGigabytes,
  fieldOfServerError,
  numberBounds,
  startingValues,
  stepOf,
  wizardMessages,
  wizardSteps,
  type WizardValues,
} from "./wizard-form.ts";

const created = wizardSteps(false);
const rolled = wizardSteps(true);
const fieldsOf = (steps: typeof created) => steps.flatMap((step) => step.fields);

/** A form as a user fills it in: the starting values plus what has no default. */
const filled = (
  changes: Partial<Omit<WizardValues, "deployment">> = {},
  deployment: Partial<WizardValues["deployment"]> = {},
) => {
  const start = startingValues();
  return {
    ...start,
    slug: "tiny",
    name: "Tiny",
    gpuType: "L4",
    ...changes,
    deployment: {
      ...start.deployment,
      imageRef: "registry.example.com/tiny:1",
      imageBytes: bytesOfGigabytes("1.6") ?? 0,
      modelSource: "hf://TinyLlama/TinyLlama-1.1B-Chat-v1.0",
      modelBytes: bytesOfGigabytes("2.2") ?? 0,
      modelFormat: "safetensors",
      engine: "vllm",
      ...deployment,
    },
  };
};

const messagesOf = (values: unknown) => {
  const result = CreateEndpointInput.safeParse(values, { error: wizardMessages });
  return Object.fromEntries(
    (result.error?.issues ?? []).reverse().map((issue) => [issue.path.join("."), issue.message]),
  );
};

describe("deploy wizard form", () => {
  it("shows every field a create needs; what it leaves out is optional in core", () => {
    const shown = new Set<string>(fieldsOf(created));
    const leftOut = (shape: Record<string, z.ZodType>, prefix: string) =>
      Object.entries(shape).filter(([key]) => !shown.has(`${prefix}${key}`));
    const { deployment, ...endpointShape } = CreateEndpointInput.shape;
    expect(shown.has("deployment")).toBe(false);
    for (const [key, schema] of [
      ...leftOut(endpointShape, ""),
      ...leftOut(DeploymentSpec.shape, "deployment."),
    ])
      expect(schema.safeParse(undefined).success, key).toBe(true);
    expect(deployment).toBe(CreateEndpointInput.shape.deployment);
    for (const field of shown) {
      const [head = "", tail] = field.split(".");
      const known = tail === undefined ? head in endpointShape : tail in DeploymentSpec.shape;
      expect(known, field).toBe(true);
    }
  });

  it("rolls with the deployment's steps alone", () => {
    expect(rolled.map((step) => step.title)).toEqual(["Image", "Model", "Review"]);
    expect(fieldsOf(rolled).every((field) => field.startsWith("deployment."))).toBe(true);
    expect(created.map((step) => step.title)).toEqual([
      "Image",
      "Model",
      "GPU and scaling",
      "Paths and objective",
      "Review",
    ]);
  });

  it("starts from values core accepts once the names and sizes are given", () => {
    const parsed = CreateEndpointInput.parse(filled());
    expect(parsed).toMatchObject({
      gpuCount: 1,
      minReplicas: 0,
      maxReplicas: 1,
      allowedPaths: ["warm", "wake", "restore", "peer", "lazy", "pull"],
      objective: "mean",
    });
    expect(parsed.desiredReplicas).toBeUndefined();
    expect(parsed.deployment.imageBytes).toBe(1_600_000_000);
  });

  it("words zod's messages for a form, with bounds from core and sizes in GB", () => {
    const empty = messagesOf({ ...startingValues(), deployment: startingValues().deployment });
    expect(empty["deployment.imageRef"]).toBe("Required.");
    // Sizes and the format are found from the registry and the model source: never required.
    for (const found of ["imageBytes", "modelBytes", "modelFormat"])
      expect(empty[`deployment.${found}`], found).toBeUndefined();
    const wrong = messagesOf(
      filled(
        { gpuCount: 9, maxReplicas: 1.5, gpuSecondsPerWaitSecond: -3 },
        { imageBytes: 2_000_000_000_000, modelBytes: Number.NaN },
      ),
    );
    expect(wrong).toMatchObject({
      gpuCount: "At most 8.",
      maxReplicas: "A whole number.",
      gpuSecondsPerWaitSecond: "At least 0.",
      "deployment.imageBytes": "At most 1000 GB.",
      "deployment.modelBytes": "A size in GB.",
    });
    expect(messagesOf(filled({}, { imageBytes: 0 }))).toMatchObject({
      "deployment.imageBytes": "Above 0 GB.",
    });
    // Core's own wording stays: the source policy and min ≤ desired ≤ max.
    const refused = messagesOf(filled({ minReplicas: 3 }, { modelSource: "file:///etc/passwd" }));
    expect(refused["deployment.modelSource"]).toMatch(/^model source refused/);
    expect(refused.minReplicas).toBe("minReplicas (3) is above maxReplicas (1)");
  });

  it("shows an eStargz digest without its ref on the image step, before the model is given", () => {
    const imageOnly = {
      ...startingValues(),
      deployment: {
        ...startingValues().deployment,
        imageRef: "registry.example.com/tiny:1",
        imageBytes: 1_600_000_000,
        estargzDigest: `sha256:${"a".repeat(64)}`,
      },
    };
    expect(messagesOf(imageOnly)["deployment.estargzDigest"]).toBe(
      "an eStargz digest needs estargzImageRef",
    );
  });

  it("takes input bounds from core's schemas", () => {
    expect(numberBounds(CreateEndpointInput.shape.gpuCount)).toEqual({ min: 1, max: 8 });
    expect(numberBounds(CreateEndpointInput.shape.desiredReplicas)).toEqual({ min: 0, max: 1000 });
    expect(numberBounds(GpuSecondsPerWaitSecond)).toEqual({ min: 0, max: 100_000 });
    expect(numberBounds(CreateEndpointInput.shape.slug)).toEqual({});
  });

  it("reads sizes in GB as bytes, blank as not given", () => {
    expect(bytesOfGigabytes("1.6")).toBe(1_600_000_000);
    expect(bytesOfGigabytes("  ")).toBeUndefined();
    expect(bytesOfGigabytes("lots")).toBeNaN();
  });

  it("puts a server error on the field it names, and on its step", () => {
    const serverError = (field: string) => ({ data: { details: { field } } });
    const fields = fieldsOf(created);
    expect(fieldOfServerError(serverError("input.deployment.imageRef"), fields)).toBe(
      "deployment.imageRef",
    );
    expect(fieldOfServerError(serverError("deployment.modelSource"), fieldsOf(rolled))).toBe(
      "deployment.modelSource",
    );
    expect(fieldOfServerError(serverError("input.allowedPaths.1"), fields)).toBe("allowedPaths");
    expect(fieldOfServerError(serverError("input.deployment.imageLayers"), fields)).toBeNull();
    expect(fieldOfServerError(new Error("network"), fields)).toBeNull();
    expect(stepOf(created, "gpuSecondsPerWaitSecond")).toBe(3);
    expect(stepOf(rolled, "slug")).toBeNull();
  });
});
