import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IMAGE_REFERENCE } from "../deployments/source-policy.ts";
import { checkpointByDigest, checkpointRefFor, snapshotStoreProblem } from "./checkpoint-ref.ts";

const STORE = "123456789012.dkr.ecr.us-east-1.amazonaws.com/thaw-snapshots";
const ids = {
  orgId: "0b7d4a6e-3f7e-4f43-9d59-6f2f7d0e4a11",
  deploymentId: "3a8f0c2d-5b1e-4c7a-8d9f-1e2a3b4c5d6e",
  snapshotId: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
};

describe("checkpointRefFor (issue 23, finding 13)", () => {
  it("names a tag in the operator's store, scoped by org, deployment and snapshot", () => {
    expect(checkpointRefFor(STORE, ids)).toBe(
      `${STORE}:${ids.orgId}.${ids.deploymentId}.${ids.snapshotId}`,
    );
    expect(checkpointRefFor("localhost:5000/thaw/snapshots", ids)).toBe(
      `localhost:5000/thaw/snapshots:${ids.orgId}.${ids.deploymentId}.${ids.snapshotId}`,
    );
  });

  it("never points anywhere but the store, whatever the ids", () => {
    fc.assert(
      fc.property(fc.uuid(), fc.uuid(), fc.uuid(), (orgId, deploymentId, snapshotId) => {
        const ref = checkpointRefFor(STORE, { orgId, deploymentId, snapshotId });
        const match = IMAGE_REFERENCE.exec(ref);
        expect(match).not.toBeNull();
        // [registry, repository, tag]: the store's host and repository, a tag, no digest.
        expect(`${match![1]}/${match![2]}`).toBe(STORE);
        expect(match![3]).toBe(`${orgId}.${deploymentId}.${snapshotId}`);
      }),
    );
  });

  it("refuses ids that could climb out of the tag", () => {
    for (const bad of ["../other", "x:latest", "a/b", ""]) {
      expect(() => checkpointRefFor(STORE, { ...ids, deploymentId: bad })).toThrow(
        /deploymentId .* is not a UUID/,
      );
    }
  });

  it.each([
    ["thaw-snapshots", "must start with the registry's host"],
    ["docker.io", "must start with the registry's host"],
    ["registry.example.com/thaw-snapshots:latest", "names a tag or digest"],
    [`registry.example.com/thaw@sha256:${"a".repeat(64)}`, "names a tag or digest"],
    ["registry.example.com/Thaw-Snapshots", "lower-case path components"],
    ["-registry.example.com/x", "is not registry-host"],
  ])("refuses %s as a store", (store, problem) => {
    expect(snapshotStoreProblem(store)).toContain(problem);
    expect(() => checkpointRefFor(store, ids)).toThrow(problem);
  });

  it.each([STORE, "localhost:5000/thaw-snapshots", "registry.internal/ops/thaw_snapshots"])(
    "accepts %s as a store",
    (store) => expect(snapshotStoreProblem(store)).toBeNull(),
  );
});

describe("checkpointByDigest", () => {
  const digest = `sha256:${"b".repeat(64)}`;
  it.each([
    [`${STORE}:o.d.s`, `${STORE}@${digest}`],
    ["localhost:5000/thaw-snapshots:o.d.s", `localhost:5000/thaw-snapshots@${digest}`],
    ["localhost:5000/thaw-snapshots", `localhost:5000/thaw-snapshots@${digest}`],
    [`${STORE}:o.d.s@sha256:${"c".repeat(64)}`, `${STORE}@${digest}`],
  ])("fetches %s by the recorded digest", (ref, expected) => {
    expect(checkpointByDigest(ref, digest)).toBe(expected);
  });

  it("refuses anything but a sha256 digest", () => {
    expect(() => checkpointByDigest(`${STORE}:o.d.s`, "latest")).toThrow("not a sha256 digest");
  });
});
