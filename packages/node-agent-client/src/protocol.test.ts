import { describe, expect, it } from "vitest";
import { HeartbeatRequest, JoinRequest, PhaseEventReport } from "./protocol.ts";

const figures = {
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
};
const join = {
  joinToken: "thawjoin_x",
  name: "n1",
  provider: "sim",
  runtime: "sim",
  agentVersion: "1",
  figures,
};

function failingPath(result: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) {
  return result.error?.issues[0]?.path.join(".");
}

describe("agent protocol schemas", () => {
  it("accepts a well-formed join", () => {
    expect(JoinRequest.safeParse(join).success).toBe(true);
  });

  it.each([
    [
      "a negative figure",
      { ...join, figures: { ...figures, networkGbps: -1 } },
      "figures.networkGbps",
    ],
    ["NaN", { ...join, figures: { ...figures, pcieGBps: Number.NaN } }, "figures.pcieGBps"],
    [
      "Infinity",
      { ...join, figures: { ...figures, diskWriteMiBps: Number.POSITIVE_INFINITY } },
      "figures.diskWriteMiBps",
    ],
    [
      "a fractional GPU count",
      { ...join, figures: { ...figures, gpuCount: 1.5 } },
      "figures.gpuCount",
    ],
    ["an unknown provider", { ...join, provider: "gcp" }, "provider"],
    ["a mass-assigned field", { ...join, orgId: "someone-else" }, ""],
    ["a missing block", { ...join, figures: undefined }, "figures"],
  ])("rejects %s, naming the field", (_what, body, path) => {
    const result = JoinRequest.safeParse(body);
    expect(result.success).toBe(false);
    expect(failingPath(result)).toBe(path);
  });

  it("rejects malformed image digests in the inventory", () => {
    const result = HeartbeatRequest.safeParse({
      agentVersion: "1",
      gpusFree: 1,
      gpusUsed: 0,
      inventory: { images: [{ digest: "sha256:xyz", bytes: 1 }] },
    });
    expect(failingPath(result)).toBe("inventory.images.0.digest");
  });

  it("keeps phase events within the closed phase set and bounded sequence numbers", () => {
    const ok = {
      coldStartId: "0199a000-0000-7000-8000-000000000001",
      sequence: 1,
      phase: "pull",
      startedAt: new Date().toISOString(),
    };
    expect(PhaseEventReport.safeParse(ok).success).toBe(true);
    expect(failingPath(PhaseEventReport.safeParse({ ...ok, phase: "download" }))).toBe("phase");
    expect(failingPath(PhaseEventReport.safeParse({ ...ok, sequence: 2 ** 53 + 1 }))).toBe(
      "sequence",
    );
  });
});
