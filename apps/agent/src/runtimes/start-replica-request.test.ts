import { randomUUID } from "node:crypto";
import { ParkReplicaRequest, StartReplicaRequest } from "@thaw/protocol";
import { describe, expect, it } from "vitest";

const base = {
  replicaId: randomUUID(),
  coldStartId: randomUUID(),
  path: "pull",
  deployment: { imageRef: "ghcr.io/thaw/llama:v1" },
  readiness: { port: 8000, timeoutSeconds: 600 },
};
const issue = (input: unknown) => {
  const result = StartReplicaRequest.safeParse(input);
  return result.success
    ? undefined
    : result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
};

describe("StartReplicaRequest", () => {
  it("accepts a minimal pull request and fills the defaults", () => {
    const parsed = StartReplicaRequest.parse(base);
    expect(parsed).toMatchObject({
      gpus: [],
      readiness: { path: "/health" },
      deployment: { env: {}, checkpointable: false },
    });
  });

  it.each([
    [
      "an option-like image reference",
      { ...base, deployment: { imageRef: "--plain-http" } },
      "deployment.imageRef",
    ],
    [
      "whitespace in a reference",
      { ...base, deployment: { imageRef: "a b" } },
      "deployment.imageRef",
    ],
    [
      "a bad digest",
      { ...base, deployment: { ...base.deployment, imageDigest: "sha256:xyz" } },
      "deployment.imageDigest",
    ],
    [
      "a relative probe path",
      { ...base, readiness: { port: 8000, path: "health", timeoutSeconds: 5 } },
      "readiness.path",
    ],
    ["port 0", { ...base, readiness: { port: 0, timeoutSeconds: 5 } }, "readiness.port"],
    [
      "an absurd timeout",
      { ...base, readiness: { port: 1, timeoutSeconds: 1e9 } },
      "readiness.timeoutSeconds",
    ],
    ["a repeated GPU", { ...base, gpus: [1, 1] }, "gpus"],
    [
      "a bad env name",
      { ...base, deployment: { ...base.deployment, env: { "A=B": "x" } } },
      "deployment.env.A=B",
    ],
    ["lazy without eStargz", { ...base, path: "lazy" }, "deployment.estargzImageRef"],
    ["restore without snapshot", { ...base, path: "restore" }, "deployment.snapshot"],
    ["warm without replica", { ...base, path: "warm" }, "warmReplicaId"],
    ["a warm replica on another path", { ...base, warmReplicaId: randomUUID() }, "warmReplicaId"],
    ["an unknown field", { ...base, shell: "rm -rf /" }, ""],
  ])("rejects %s", (_name, input, path) => {
    expect(issue(input)?.[0]).toMatch(new RegExp(`^${path.replace(/\./g, "\\.")}: `));
  });

  it("accepts a restore request with a level-2 snapshot", () => {
    expect(
      issue({
        ...base,
        path: "restore",
        deployment: {
          ...base.deployment,
          snapshot: {
            snapshotId: randomUUID(),
            checkpointRef: `registry.internal:5000/snapshots/llama@sha256:${"e".repeat(64)}`,
            sleepLevel: 2,
            reloadWeights: { path: "/collective_rpc", body: '{"method":"reload_weights"}' },
          },
        },
      }),
    ).toBeUndefined();
  });

  it("wants engine sleep and wake together when parking", () => {
    expect(
      ParkReplicaRequest.safeParse({
        replicaId: randomUUID(),
        engineSleep: { path: "/sleep?level=1" },
      }).success,
    ).toBe(false);
  });
});
