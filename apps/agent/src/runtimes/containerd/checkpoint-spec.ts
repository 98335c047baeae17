import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { LABEL_COLD_START, LABEL_REPLICA } from "./commands.ts";

// What a restore may take from a checkpoint image (issue 23, finding 13). `ctr containers
// restore` rebuilds the container from the checkpoint's own blobs: its OCI spec (capabilities,
// seccomp, mounts, hooks), its runtime and runtime options (runc's binary), and the image its
// rootfs comes from. ctr has no command that restores a task's CRIU images into a container the
// agent created itself, so the agent creates that container the cold path's way, reads the
// spec containerd built for it, and refuses a checkpoint whose spec, runtime or image differs
// in anything but what names the one container (its id, its host): the restored container is
// then exactly the container a cold start would have made.

/** containerd's media types of a checkpoint index (containerd/images/mediatypes.go). */
export const CHECKPOINT_MEDIA = {
  criu: "application/vnd.containerd.container.criu.checkpoint.criu.tar",
  config: "application/vnd.containerd.container.checkpoint.config.v1+proto",
  options: "application/vnd.containerd.container.checkpoint.options.v1+proto",
  runtimeName: "application/vnd.containerd.container.checkpoint.runtime.name",
  runtimeOptions: "application/vnd.containerd.container.checkpoint.runtime.options+proto",
  imageName: "application/vnd.containerd.container.checkpoint.image.name",
  /** The rw layer (`--rw`): rootfs.CreateDiff's default media type. */
  rw: "application/vnd.oci.image.layer.v1.tar+gzip",
} as const;

const KNOWN_MEDIA = new Set<string>(Object.values(CHECKPOINT_MEDIA));

const Descriptor = z.object({
  mediaType: z.string(),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  size: z.number().int().min(0),
});
export const CheckpointIndex = z.object({
  manifests: z.array(Descriptor).max(32),
  annotations: z.record(z.string(), z.string()).optional(),
});
export type CheckpointIndex = z.infer<typeof CheckpointIndex>;

/** `ctr containers info <id>`: the fields a restore compares. */
export const ContainerInfo = z.object({
  Runtime: z.object({
    Name: z.string(),
    Options: z.object({ type_url: z.string().optional(), value: z.string().optional() }).nullish(),
  }),
  Spec: z.record(z.string(), z.unknown()),
});
export type ContainerInfo = z.infer<typeof ContainerInfo>;

/** google.protobuf.Any: field 1 type_url (string), field 2 value (bytes). */
export function decodeProtoAny(bytes: Uint8Array): { typeUrl: string; value: Buffer } {
  const buffer = Buffer.from(bytes);
  let typeUrl = "";
  let value = Buffer.alloc(0);
  let at = 0;
  const varint = () => {
    let result = 0;
    for (let shift = 0; shift < 35; shift += 7) {
      if (at >= buffer.length) throw new Error("truncated protobuf");
      const byte = buffer[at++]!;
      result += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return result;
    }
    throw new Error("protobuf varint too long");
  };
  while (at < buffer.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    if (key % 8 !== 2 || (field !== 1 && field !== 2))
      throw new Error(`unexpected protobuf field ${field} (wire type ${key % 8}) in an Any`);
    const length = varint();
    if (at + length > buffer.length) throw new Error("truncated protobuf");
    const chunk = buffer.subarray(at, at + length);
    at += length;
    if (field === 1) typeUrl = chunk.toString("utf8");
    else value = Buffer.from(chunk);
  }
  return { typeUrl, value };
}

/** The inverse of decodeProtoAny (what containerd writes): for tests and fixtures. */
export function encodeProtoAny(typeUrl: string, value: Uint8Array): Buffer {
  const varint = (n: number) => {
    const out: number[] = [];
    while (n >= 0x80) {
      out.push((n % 0x80) | 0x80);
      n = Math.floor(n / 0x80);
    }
    out.push(n);
    return Buffer.from(out);
  };
  const type = Buffer.from(typeUrl, "utf8");
  return Buffer.concat([
    Buffer.from([0x0a]),
    varint(type.length),
    type,
    ...(value.length > 0 ? [Buffer.from([0x12]), varint(value.length), Buffer.from(value)] : []),
  ]);
}

/** typeurl's name for an OCI runtime spec carried in an Any (its value is the spec's JSON). */
export const SPEC_TYPE_URL = "types.containerd.io/opencontainers/runtime-spec/1/Spec";

/**
 * The spec with what names one container and its host set aside: the cgroup path
 * (/<namespace>/<container id>), the replica and cold-start labels ctr copies into the
 * annotations, and HOSTNAME (ctr's --net-host sets the capturing host's). Everything else —
 * process, capabilities, seccomp, mounts, hooks, namespaces — must match to the byte.
 */
export function comparableSpec(
  spec: Record<string, unknown>,
  namespace: string,
): { spec: unknown; problem: string | null } {
  const copy = structuredClone(spec) as {
    linux?: { cgroupsPath?: unknown };
    annotations?: Record<string, unknown>;
    process?: { env?: unknown };
  };
  let problem: string | null = null;
  const cgroupsPath = copy.linux?.cgroupsPath;
  if (cgroupsPath !== undefined) {
    // Inside the agent's namespace, one container deep: outside it, a task escapes the host's
    // per-namespace rules (the IMDS firewall matches the /<namespace> cgroup).
    const escaped = namespace.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    if (
      typeof cgroupsPath !== "string" ||
      !new RegExp(`^/${escaped}/[A-Za-z0-9_.-]+$`).test(cgroupsPath)
    )
      problem = `cgroup ${JSON.stringify(cgroupsPath)} is not a container's cgroup in /${namespace}`;
    copy.linux!.cgroupsPath = "<container>";
  }
  if (copy.annotations) {
    delete copy.annotations[LABEL_REPLICA];
    delete copy.annotations[LABEL_COLD_START];
  }
  if (Array.isArray(copy.process?.env)) {
    copy.process.env = (copy.process.env as unknown[]).filter(
      (e) => !(typeof e === "string" && e.startsWith("HOSTNAME=")),
    );
  }
  return { spec: copy, problem };
}

/** Dotted paths where two JSON values differ (at most `limit`), for a refusal's message. */
export function specDifferences(a: unknown, b: unknown, limit = 5, at = "spec"): string[] {
  if (isDeepStrictEqual(a, b)) return [];
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  if (isObject(a) && isObject(b)) {
    const out: string[] = [];
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      out.push(...specDifferences(a[key], b[key], limit - out.length, `${at}.${key}`));
      if (out.length >= limit) break;
    }
    return out;
  }
  return [at];
}

export interface CheckpointBlobs {
  index: CheckpointIndex;
  /** Blob contents by media type (each at most once in a checkpoint). */
  read: (mediaType: string) => Promise<Buffer | undefined>;
}

/**
 * Why this checkpoint may not be restored into the container the agent built, or [] when
 * it may: every blob is a known kind, the CRIU images are there, the image is one of the
 * deployment's, the runtime is the rebuilt container's with no options of its own, and the
 * spec equals the rebuilt spec but for the container's own names.
 */
export async function checkpointProblems(
  checkpoint: CheckpointBlobs,
  expected: { imageRefs: readonly string[]; rebuilt: ContainerInfo; namespace: string },
): Promise<string[]> {
  const problems: string[] = [];
  const kinds = checkpoint.index.manifests.map((m) => m.mediaType);
  for (const kind of new Set(kinds)) {
    if (!KNOWN_MEDIA.has(kind)) problems.push(`an unexpected blob of type ${kind}`);
    else if (kinds.filter((k) => k === kind).length > 1) problems.push(`two blobs of type ${kind}`);
  }
  if (!kinds.includes(CHECKPOINT_MEDIA.criu))
    problems.push("no CRIU images (not a task checkpoint)");
  if (problems.length > 0) return problems;

  const imageName = (await checkpoint.read(CHECKPOINT_MEDIA.imageName))?.toString("utf8");
  if (imageName === undefined || !expected.imageRefs.includes(imageName))
    problems.push(`its image ${JSON.stringify(imageName ?? null)} is not the deployment's`);

  const runtimeName = (await checkpoint.read(CHECKPOINT_MEDIA.runtimeName))?.toString("utf8");
  if (runtimeName !== expected.rebuilt.Runtime.Name)
    problems.push(
      `its runtime ${JSON.stringify(runtimeName ?? null)} is not ${expected.rebuilt.Runtime.Name}`,
    );
  const runtimeOptions = await checkpoint.read(CHECKPOINT_MEDIA.runtimeOptions);
  if (runtimeOptions !== undefined && decodeProtoAny(runtimeOptions).value.length > 0)
    problems.push("it sets runtime options (runc's binary, root or cgroup driver)");

  const config = await checkpoint.read(CHECKPOINT_MEDIA.config);
  if (config === undefined) return [...problems, "no container spec"];
  const any = decodeProtoAny(config);
  if (any.typeUrl !== SPEC_TYPE_URL)
    return [...problems, `its spec is a ${JSON.stringify(any.typeUrl)}, not an OCI runtime spec`];
  let captured: unknown;
  try {
    captured = JSON.parse(any.value.toString("utf8"));
  } catch {
    return [...problems, "its spec is not JSON"];
  }
  if (typeof captured !== "object" || captured === null || Array.isArray(captured))
    return [...problems, "its spec is not an object"];
  const theirs = comparableSpec(captured as Record<string, unknown>, expected.namespace);
  const ours = comparableSpec(expected.rebuilt.Spec, expected.namespace);
  if (theirs.problem) problems.push(theirs.problem);
  const differences = specDifferences(theirs.spec, ours.spec);
  if (differences.length > 0)
    problems.push(`its spec differs from the one the agent builds at ${differences.join(", ")}`);
  return problems;
}
