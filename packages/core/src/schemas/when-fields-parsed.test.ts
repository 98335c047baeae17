import { describe, expect, it } from "vitest";
import { CreateEndpointInput, DeploymentSpec } from "./index.ts";

// The deploy wizard validates one step at a time against the whole schema: a rule over the
// step's fields must show while later steps are still empty.
const DIGEST = `sha256:${"b".repeat(64)}`;
const imageStepOnly = { imageRef: "registry.example.com/vllm:1", imageBytes: 1e9 };

describe("rules over fields run once those fields parsed", () => {
  it("an eStargz digest without its ref is refused before the model is given", () => {
    const parsed = DeploymentSpec.safeParse({ ...imageStepOnly, estargzDigest: DIGEST });
    const issues = parsed.error?.issues.map((issue) => issue.path.join(".")) ?? [];
    expect(issues).toContain("estargzDigest");
    // The fields' own issues come first: what the API names is unchanged.
    expect(issues[0]).toBe("modelSource");
  });

  it("min above max is refused while another field is not a number yet", () => {
    const parsed = CreateEndpointInput.safeParse({
      slug: "e",
      name: "E",
      gpuType: "L4",
      gpuCount: "two",
      minReplicas: 3,
      maxReplicas: 2,
      deployment: {},
    });
    const issues = parsed.error?.issues.map((issue) => issue.path.join(".")) ?? [];
    expect(issues).toContain("minReplicas");
    expect(issues[0]).toBe("gpuCount");
  });

  it("does not run a rule over a field that failed to parse", () => {
    const parsed = CreateEndpointInput.safeParse({
      slug: "e",
      name: "E",
      gpuType: "L4",
      minReplicas: "3",
      maxReplicas: 2,
      deployment: {},
    });
    const minIssues = parsed.error?.issues.filter((issue) => issue.path[0] === "minReplicas");
    expect(minIssues?.map((issue) => issue.code)).toEqual(["invalid_type"]);
    expect(DeploymentSpec.safeParse("not an object").error?.issues).toHaveLength(1);
  });
});
