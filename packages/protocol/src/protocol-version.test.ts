import { describe, expect, it } from "vitest";
import { JoinRequest } from "./control-plane-api.ts";
import {
  AGENT_PROTOCOL_VERSION,
  SUPPORTED_AGENT_PROTOCOL_VERSIONS,
  agentProtocolVersionProblem,
} from "./protocol-version.ts";

const join = {
  joinToken: "thawjoin_x",
  name: "n1",
  provider: "sim",
  runtime: "sim",
  agentVersion: "1",
  figures: {
    instanceType: "g5.xlarge",
    gpuModel: "A10G",
    gpuCount: 1,
    gpuMemoryGiB: 24,
    vcpus: 4,
    networkGbps: 10,
    diskReadMiBps: 1000,
    diskWriteMiBps: 125,
    pcieGBps: 12,
    registryRttMs: 3,
  },
};

describe("protocol version negotiation at join", () => {
  it("takes the version this code speaks, and a join from before joins carried one", () => {
    expect(SUPPORTED_AGENT_PROTOCOL_VERSIONS).toContain(AGENT_PROTOCOL_VERSION);
    expect(agentProtocolVersionProblem(AGENT_PROTOCOL_VERSION)).toBeNull();
    expect(agentProtocolVersionProblem(undefined)).toBeNull();
    expect(JoinRequest.parse({ ...join, protocolVersion: AGENT_PROTOCOL_VERSION })).toMatchObject({
      protocolVersion: AGENT_PROTOCOL_VERSION,
    });
  });

  it("names the version it does not speak, and the ones it does", () => {
    const problem = agentProtocolVersionProblem(AGENT_PROTOCOL_VERSION + 1);
    expect(problem).toContain(`version ${AGENT_PROTOCOL_VERSION + 1}`);
    expect(problem).toContain(SUPPORTED_AGENT_PROTOCOL_VERSIONS.join(", "));
  });

  it.each([0, 1.5, -1, "1", null, 70_000])("refuses %j as a version, naming the field", (v) => {
    const result = JoinRequest.safeParse({ ...join, protocolVersion: v });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(["protocolVersion"]);
  });
});
