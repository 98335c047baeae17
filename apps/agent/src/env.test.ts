import { describe, expect, it } from "vitest";
import { loadEnv, parseSimHosts } from "./env.ts";

describe("agent env", () => {
  it("parses the sim fleet spec", () => {
    expect(parseSimHosts("g5.xlarge:2,p5.48xlarge:1")).toEqual([
      { instanceType: "g5.xlarge", count: 2 },
      { instanceType: "p5.48xlarge", count: 1 },
    ]);
  });

  it("names the malformed variable", () => {
    expect(() => loadEnv({ THAW_SIM_HOSTS: "g5.xlarge" })).toThrow(
      /THAW_SIM_HOSTS: expected '<instance-type>:<count>/,
    );
    expect(() => loadEnv({ THAW_CONTROL_PLANE_URL: "not a url" })).toThrow(
      /THAW_CONTROL_PLANE_URL/,
    );
    expect(() => loadEnv({ THAW_AGENT_RUNTIME: "containerd" })).toThrow(
      /THAW_AGENT_RUNTIME: only 'sim'/,
    );
  });
});
