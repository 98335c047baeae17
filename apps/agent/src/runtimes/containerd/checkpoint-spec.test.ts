import { describe, expect, it } from "vitest";
import {
  CHECKPOINT_MEDIA,
  checkpointProblems,
  comparableSpec,
  type ContainerInfo,
  decodeProtoAny,
  encodeProtoAny,
  SPEC_TYPE_URL,
} from "./checkpoint-spec.ts";

const IMAGE = "registry.example.com/models/llama@sha256:" + "1".repeat(64);
const digest = (c: string) => `sha256:${c.repeat(64)}`;

/** A spec as ctr builds it for one container on one host. */
const specFor = (id: string, host: string) => ({
  ociVersion: "1.0.2-dev",
  process: {
    args: ["vllm", "serve"],
    env: ["PATH=/usr/bin", "OMP_NUM_THREADS=1", `HOSTNAME=${host}`],
    capabilities: { bounding: ["CAP_CHOWN", "CAP_CHECKPOINT_RESTORE"] },
    noNewPrivileges: true,
  },
  annotations: {
    "thaw.replica-id": id,
    "thaw.cold-start-id": `${id}-start`,
    "org.criu.config": "/etc/thaw/criu/runc.conf",
  },
  linux: { cgroupsPath: `/thaw/${id}`, seccomp: { defaultAction: "SCMP_ACT_ERRNO" } },
});

const rebuilt: ContainerInfo = {
  Runtime: { Name: "io.containerd.runc.v2", Options: { type_url: "containerd.runc.v1.Options" } },
  Spec: specFor("new-replica", "gpu-host-2"),
};

/** A checkpoint's blobs by media type, and its index. */
function checkpoint(blobs: Partial<Record<string, Buffer | string>>, extraKinds: string[] = []) {
  const contents = new Map(
    Object.entries(blobs)
      .filter((entry): entry is [string, Buffer | string] => entry[1] !== undefined)
      .map(([k, v]) => [k, typeof v === "string" ? Buffer.from(v) : v]),
  );
  const kinds = [...contents.keys(), ...extraKinds];
  return {
    index: {
      manifests: kinds.map((mediaType, i) => ({ mediaType, digest: digest(String(i)), size: 1 })),
    },
    read: (mediaType: string) => Promise.resolve(contents.get(mediaType)),
  };
}
const captured = (spec: unknown) =>
  encodeProtoAny(SPEC_TYPE_URL, Buffer.from(JSON.stringify(spec)));
const legit = (overrides: Partial<Record<string, Buffer | string>> = {}) =>
  checkpoint({
    [CHECKPOINT_MEDIA.criu]: "criu",
    [CHECKPOINT_MEDIA.imageName]: IMAGE,
    [CHECKPOINT_MEDIA.runtimeName]: "io.containerd.runc.v2",
    [CHECKPOINT_MEDIA.config]: captured(specFor("old-replica", "gpu-host-1")),
    [CHECKPOINT_MEDIA.rw]: "rw",
    ...overrides,
  });
const expected = { imageRefs: [IMAGE], rebuilt, namespace: "thaw" };

describe("checkpointProblems (issue 23, finding 13)", () => {
  it("accepts a checkpoint of a cold-path container on another replica and host", async () => {
    expect(await checkpointProblems(legit(), expected)).toEqual([]);
  });

  it.each([
    [
      "a capability the agent never grants",
      {
        process: {
          ...specFor("old-replica", "h").process,
          capabilities: { bounding: ["CAP_SYS_MODULE"] },
        },
      },
      "spec.process.capabilities.bounding",
    ],
    ["no seccomp", { linux: { cgroupsPath: "/thaw/old-replica" } }, "spec.linux.seccomp"],
    [
      "a host mount",
      { mounts: [{ destination: "/host", source: "/", type: "bind" }] },
      "spec.mounts",
    ],
    [
      "new privileges",
      { process: { ...specFor("old-replica", "h").process, noNewPrivileges: false } },
      "spec.process.noNewPrivileges",
    ],
  ])("refuses a spec with %s", async (_name, change, where) => {
    const spec = { ...specFor("old-replica", "gpu-host-1"), ...change };
    const problems = await checkpointProblems(
      legit({ [CHECKPOINT_MEDIA.config]: captured(spec) }),
      expected,
    );
    expect(problems.join("; ")).toContain(
      `its spec differs from the one the agent builds at ${where}`,
    );
  });

  it("refuses a task cgroup outside the agent's namespace (the IMDS firewall matches /thaw)", async () => {
    const spec = specFor("old-replica", "h");
    spec.linux.cgroupsPath = "/system.slice/escape";
    expect(
      await checkpointProblems(legit({ [CHECKPOINT_MEDIA.config]: captured(spec) }), expected),
    ).toEqual(['cgroup "/system.slice/escape" is not a container\'s cgroup in /thaw']);
  });

  it("refuses another image, another runtime, runtime options and unknown blobs", async () => {
    expect(
      await checkpointProblems(
        legit({ [CHECKPOINT_MEDIA.imageName]: "registry.example.com/other:v1" }),
        expected,
      ),
    ).toEqual(['its image "registry.example.com/other:v1" is not the deployment\'s']);
    expect(
      await checkpointProblems(
        legit({ [CHECKPOINT_MEDIA.runtimeName]: "io.containerd.runsc.v1" }),
        expected,
      ),
    ).toEqual(['its runtime "io.containerd.runsc.v1" is not io.containerd.runc.v2']);
    const binaryName = encodeProtoAny(
      "containerd.runc.v1.Options",
      Buffer.from([0x32, 0x04, ...Buffer.from("/evl")]),
    );
    expect(
      await checkpointProblems(legit({ [CHECKPOINT_MEDIA.runtimeOptions]: binaryName }), expected),
    ).toEqual(["it sets runtime options (runc's binary, root or cgroup driver)"]);
    // ctr writes no options blob for a container without options; an empty one is the same.
    expect(
      await checkpointProblems(
        legit({
          [CHECKPOINT_MEDIA.runtimeOptions]: encodeProtoAny(
            "containerd.runc.v1.Options",
            Buffer.alloc(0),
          ),
        }),
        expected,
      ),
    ).toEqual([]);
    const unknown = checkpoint({ [CHECKPOINT_MEDIA.criu]: "criu" }, ["application/x-anything"]);
    expect(await checkpointProblems(unknown, expected)).toEqual([
      "an unexpected blob of type application/x-anything",
    ]);
  });

  it("refuses what is not a task checkpoint or carries no spec", async () => {
    expect(
      await checkpointProblems(legit({ [CHECKPOINT_MEDIA.criu]: undefined }), expected),
    ).toContain("no CRIU images (not a task checkpoint)");
    const noSpec = legit();
    noSpec.index.manifests = noSpec.index.manifests.filter(
      (m) => m.mediaType !== CHECKPOINT_MEDIA.config,
    );
    const read = noSpec.read;
    noSpec.read = (kind) =>
      kind === CHECKPOINT_MEDIA.config ? Promise.resolve(undefined) : read(kind);
    expect(await checkpointProblems(noSpec, expected)).toEqual(["no container spec"]);
    const wrongType = encodeProtoAny("containerd.runc.v1.Options", Buffer.from("{}"));
    expect(
      await checkpointProblems(legit({ [CHECKPOINT_MEDIA.config]: wrongType }), expected),
    ).toEqual(['its spec is a "containerd.runc.v1.Options", not an OCI runtime spec']);
  });
});

describe("protobuf Any", () => {
  it("round-trips what containerd writes, including long values", () => {
    const value = Buffer.from("x".repeat(70_000));
    expect(decodeProtoAny(encodeProtoAny(SPEC_TYPE_URL, value))).toEqual({
      typeUrl: SPEC_TYPE_URL,
      value,
    });
    expect(() => decodeProtoAny(Buffer.from([0x0a, 0x05, 0x61]))).toThrow("truncated protobuf");
    expect(() => decodeProtoAny(Buffer.from([0x18, 0x01]))).toThrow("unexpected protobuf field 3");
  });
});

describe("comparableSpec", () => {
  it("sets aside only what names the container and its host", () => {
    const a = comparableSpec(specFor("a", "host-a"), "thaw");
    const b = comparableSpec(specFor("b", "host-b"), "thaw");
    expect(a).toEqual(b);
    expect(a.problem).toBeNull();
    expect(JSON.stringify(a.spec)).toContain("org.criu.config");
  });
});
