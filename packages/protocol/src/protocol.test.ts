import { describe, expect, it } from "vitest";
import {
  CaptureSnapshotRequest,
  CaptureSnapshotResponse,
  StartReplicaRequest,
} from "./agent-api.ts";
import { HeartbeatRequest, JoinRequest, PhaseEventReport } from "./control-plane-api.ts";

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

  it("takes the disk the agent measured as an optional figure, bounded like the others", () => {
    const measuredDisk = { readMiBps: 1012.5, writeMiBps: 998, measuredAt: "2026-11-26T17:00:00Z" };
    expect(JoinRequest.parse({ ...join, figures: { ...figures, measuredDisk } }).figures).toEqual({
      ...figures,
      measuredDisk,
    });
    const bad = {
      ...join,
      figures: { ...figures, measuredDisk: { ...measuredDisk, readMiBps: -1 } },
    };
    expect(failingPath(JoinRequest.safeParse(bad))).toBe("figures.measuredDisk.readMiBps");
  });

  // A join's names are shown on the fleet card and kept in the audit log: a NUL (which
  // Postgres refuses, after the join token was spent), a lone surrogate or a bidi override
  // is refused by the schema, naming the field.
  it.each([
    ["name", "n\u0000"],
    ["name", "n\uD800"],
    ["zone", "us\u202Eeast"],
    ["instanceId", "i-\u200Babc"],
    ["agentVersion", "   "],
    ["figures.gpuModel", "A10G\u0007"],
  ])("refuses a join whose %s is not plain text", (field, text) => {
    const [first, second] = field.split(".") as [keyof typeof join, string | undefined];
    const bad = second
      ? { ...join, [first]: { ...(join[first] as object), [second]: text } }
      : { ...join, [first]: text };
    expect(failingPath(JoinRequest.safeParse(bad))).toBe(field);
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

  describe("checkpoints (issue 23, finding 13)", () => {
    const digest = `sha256:${"a".repeat(64)}`;
    const restore = (checkpointRef: string) =>
      StartReplicaRequest.safeParse({
        replicaId: "0b7d4a6e-3f7e-4f43-9d59-6f2f7d0e4a11",
        coldStartId: "3a8f0c2d-5b1e-4c7a-8d9f-1e2a3b4c5d6e",
        path: "restore",
        deployment: {
          imageRef: "registry.example.com/team/llama:v1",
          snapshot: {
            snapshotId: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
            checkpointRef,
            sleepLevel: 2,
          },
        },
        readiness: { port: 8000, timeoutSeconds: 60 },
      });

    it("restores a checkpoint only by digest: a tag could have been moved since the capture", () => {
      expect(restore(`snapshots.example.com/thaw-snapshots@${digest}`).success).toBe(true);
      expect(restore(`snapshots.example.com/thaw-snapshots:o-d-s@${digest}`).success).toBe(true);
      for (const tagOnly of [
        "snapshots.example.com/thaw-snapshots:o-d-s",
        "snapshots.example.com/thaw-snapshots",
        `snapshots.example.com/thaw-snapshots@sha256:${"a".repeat(63)}`,
      ]) {
        const parsed = restore(tagOnly);
        expect(parsed.success, tagOnly).toBe(false);
        expect(failingPath(parsed)).toBe("deployment.snapshot.checkpointRef");
      }
    });

    it("captures to a tag, and the agent answers with the digest it wrote", () => {
      const capture = (checkpointRef: string) =>
        CaptureSnapshotRequest.safeParse({
          replicaId: "0b7d4a6e-3f7e-4f43-9d59-6f2f7d0e4a11",
          snapshotId: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
          checkpointRef,
          sleepLevel: 2,
        }).success;
      expect(capture("snapshots.example.com/thaw-snapshots:o-d-s")).toBe(true);
      expect(capture(`snapshots.example.com/thaw-snapshots@${digest}`)).toBe(false);

      const answer = {
        snapshotId: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
        checkpointRef: "snapshots.example.com/thaw-snapshots:o-d-s",
        seconds: 1,
        pushed: true,
      };
      expect(CaptureSnapshotResponse.safeParse({ ...answer, digest }).success).toBe(true);
      expect(CaptureSnapshotResponse.safeParse(answer).success).toBe(false);
    });
  });
});

describe("registry credentials on a start (issue 19)", () => {
  const start = (registryAuth: unknown) =>
    StartReplicaRequest.safeParse({
      replicaId: "0b7d4a6e-3f7e-4f43-9d59-6f2f7d0e4a11",
      coldStartId: "3a8f0c2d-5b1e-4c7a-8d9f-1e2a3b4c5d6e",
      path: "pull",
      deployment: { imageRef: "123456789012.dkr.ecr.us-east-1.amazonaws.com/team/llama:v1" },
      readiness: { port: 8000, timeoutSeconds: 60 },
      registryAuth,
    });
  const ecr = {
    registry: "123456789012.dkr.ecr.us-east-1.amazonaws.com",
    username: "AWS",
    password: "eyJwYXlsb2FkIjoi".repeat(100),
    expiresAt: "2026-11-27T05:00:00.000Z",
  };

  it("is optional, and takes a few per-registry credentials", () => {
    expect(start(undefined).success).toBe(true);
    expect(start([ecr, { registry: "docker.io", username: "me", password: "p" }]).success).toBe(
      true,
    );
    expect(start([{ registry: "localhost:5000", username: "u", password: "p:w d" }]).success).toBe(
      true,
    );
  });

  it("refuses what could split a header or a config line, other hosts, extras and duplicates", () => {
    const refused: unknown[] = [
      [{ ...ecr, password: "line\nbreak" }],
      [{ ...ecr, username: "a\u0000b" }],
      [{ ...ecr, registry: "-k.example.com" }],
      [{ ...ecr, registry: "https://registry.example.com" }],
      [{ ...ecr, registry: "registry.example.com/path" }],
      [{ ...ecr, password: "" }],
      [{ ...ecr, password: "x".repeat(16_385) }],
      [{ ...ecr, expiresAt: "tomorrow" }],
      [{ ...ecr, token: "extra" }],
      [ecr, ecr],
      Array.from({ length: 5 }, (_, i) => ({ ...ecr, registry: `r${i}.example.com` })),
    ];
    for (const value of refused) {
      const parsed = start(value);
      expect(parsed.success, JSON.stringify(value).slice(0, 80)).toBe(false);
      expect(failingPath(parsed)).toMatch(/^registryAuth/);
    }
  });
});
