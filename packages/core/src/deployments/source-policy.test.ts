import { describe, expect, it } from "vitest";
import { DeploymentSpec, deriveImageLayers } from "./deployment-spec.ts";
import { imageRefProblem, modelSourceProblem, nonPublicHostReason } from "./source-policy.ts";

describe("model source allow-list", () => {
  it.each([
    "hf://meta-llama/Llama-3.2-3B-Instruct",
    "hf://bartowski/Llama-3.2-1B-Instruct-GGUF/Llama-3.2-1B-Instruct-Q8_0.gguf",
    "s3://thaw-demo-models/meta-llama/Meta-Llama-3-8B/",
    "gs://my-models/llama/",
    "https://huggingface.co/openai/gpt-oss-20b/resolve/main/model.safetensors",
    "https://8.8.8.8/weights.bin",
  ])("allows %s", (source) => {
    expect(modelSourceProblem(source)).toBeNull();
  });

  it.each([
    ["http://huggingface.co/x/y", /use one of/],
    ["file:///etc/passwd", /use one of/],
    ["ftp://example.com/x", /use one of/],
    ["huggingface.co/x/y", /use one of/],
    ["https://169.254.169.254/latest/meta-data/", /link-local/],
    ["https://[fd00:ec2::254]/latest/", /reserved/],
    ["https://[::ffff:169.254.169.254]/", /reserved/],
    ["https://[::1]/x", /reserved/],
    ["https://127.0.0.1/x", /loopback/],
    ["https://2130706433/x", /loopback/],
    ["https://0x7f.1/x", /loopback/],
    ["https://10.1.2.3/x", /private/],
    ["https://192.168.0.10/x", /private/],
    ["https://172.20.0.1/x", /private/],
    ["https://100.100.100.200/x", /private/],
    ["https://metadata.google.internal/computeMetadata/v1/", /metadata/],
    ["https://instance-data/latest/", /metadata/],
    ["https://localhost:8080/x", /internal/],
    ["https://models.svc.cluster.local/x", /internal/],
    ["https://kubernetes/x", /fully qualified/],
    ["https://user:secret@example.com/x", /credentials/],
    ["s3://../etc", /bucket/],
    ["hf://just-a-name", /owner/],
  ])("refuses %s", (source, reason) => {
    expect(modelSourceProblem(source)).toMatch(reason);
  });

  it("normalises trailing dots and case before judging a host", () => {
    expect(nonPublicHostReason("LOCALHOST.")).toMatch(/internal/);
    expect(nonPublicHostReason("Registry.Example.com")).toBeNull();
  });
});

describe("image references", () => {
  it.each([
    "registry.demo.thaw.dev/vllm-openai:v0.11.0",
    "vllm/vllm-openai:latest",
    "ubuntu",
    `ghcr.io/org/image@sha256:${"a".repeat(64)}`,
    "registry.example.com:5000/team/model:1.2",
  ])("allows %s", (ref) => {
    expect(imageRefProblem(ref)).toBeNull();
  });

  it.each([
    ["169.254.169.254/latest:x", /registry/],
    ["localhost:5000/model:1", /registry/],
    ["10.0.0.5:5000/model:1", /registry/],
    ["registry.internal/model:1", /registry/],
    ["UPPER/Case:tag", /not an image reference/],
    ["a b", /not an image reference/],
    ["image@sha256:short", /not an image reference/],
  ])("refuses %s", (ref, reason) => {
    expect(imageRefProblem(ref)).toMatch(reason);
  });
});

describe("deployment spec defaults", () => {
  const spec = {
    imageRef: "registry.example.com/vllm:1",
    imageBytes: 7_700_000_001,
    modelSource: "hf://meta-llama/Llama-3.2-3B-Instruct",
    modelBytes: 6_430_000_000,
    modelFormat: "safetensors",
    engine: "vllm",
  };

  it("derives layers of at most 2 GB that add up to the image's size", () => {
    const layers = deriveImageLayers(7_700_000_001);
    expect(layers).toHaveLength(4);
    expect(layers.reduce((s, l) => s + l.bytes, 0)).toBe(7_700_000_001);
    expect(Math.max(...layers.map((l) => l.bytes))).toBeLessThanOrEqual(2_000_000_000);
    expect(deriveImageLayers(1)).toEqual([{ bytes: 1, compression: "gzip-6", content: "code" }]);
  });

  it("refuses layers that disagree with imageBytes, and an eStargz digest without its ref", () => {
    const layers = DeploymentSpec.safeParse({
      ...spec,
      imageLayers: [{ bytes: 1, compression: "gzip-6", content: "code" }],
    });
    expect(layers.error?.issues[0]?.path).toEqual(["imageLayers"]);
    const esgz = DeploymentSpec.safeParse({ ...spec, estargzDigest: `sha256:${"b".repeat(64)}` });
    expect(esgz.error?.issues[0]?.path).toEqual(["estargzDigest"]);
  });

  it("refuses NUL bytes, unknown engines and mass-assigned fields", () => {
    expect(DeploymentSpec.safeParse({ ...spec, modelFormat: "gguf\u0000" }).success).toBe(false);
    expect(DeploymentSpec.safeParse({ ...spec, engineArgs: ["--x\u0000"] }).success).toBe(false);
    expect(DeploymentSpec.safeParse({ ...spec, engine: "tensorflow" }).success).toBe(false);
    expect(DeploymentSpec.safeParse({ ...spec, status: "active" }).error?.issues[0]?.code).toBe(
      "unrecognized_keys",
    );
  });

  it("refuses IPv6 forms of IPv4, names that spell private addresses, and climbing paths", () => {
    for (const source of [
      "https://[64:ff9b::a00:1]/m", // NAT64 of 10.0.0.1
      "https://[2002:a00:1::]/m", // 6to4 of 10.0.0.1
      "https://[2001:0::a00:1]/m", // Teredo
      "https://[::ffff:169.254.169.254]/m",
      "https://127.0.0.1.nip.io/m",
      "https://10-0-0-7.sslip.io/m",
      "https://app.169.254.169.254.nip.io/m",
      "hf://owner/repo/../../etc/passwd",
      "hf://owner/repo/%2e%2e/x",
      "s3://bucket/../other",
    ])
      expect(modelSourceProblem(source), source).not.toBeNull();
    // Public addresses spelled in a name, and ordinary names, stay allowed.
    expect(modelSourceProblem("https://8.8.8.8.nip.io/m")).toBeNull();
    expect(modelSourceProblem("https://models.example.com/v1.2.3/x")).toBeNull();
    expect(modelSourceProblem("hf://meta-llama/Llama-3.2-3B-Instruct")).toBeNull();
  });
});
