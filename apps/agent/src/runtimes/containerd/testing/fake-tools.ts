import { createHash } from "node:crypto";
import {
  appendFile,
  chmod,
  copyFile,
  mkdir,
  mkdtemp,
  readFile,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Fake ctr, ctr-remote, criu and cuda-checkpoint for unit tests: one bash script behind four
// names, first on PATH. Each call appends its argv (tab-separated) to calls.log, keeps just
// enough state (tasks, containers, images, CUDA states) to answer the runtime's queries the
// way the real tools print, and fails on demand with a given stderr.

/** The fake itself: a real bash file beside this one, copied into each fake tool dir. */
const SCRIPT_PATH = fileURLToPath(new URL("./fake-tool.sh", import.meta.url));

export interface FakeImage {
  ref: string;
  digest: string;
  /** Manifest JSON served by `ctr content get <digest>`. */
  manifest: string;
}

export interface BlobDescriptor {
  mediaType: string;
  digest: string;
  size: number;
}

export interface FakeTools {
  dir: string;
  /** Environment for the runtime's tools: fakes first on PATH. */
  env: NodeJS.ProcessEnv;
  /** Every call so far: [tool, ...args]. */
  calls(): Promise<string[][]>;
  /** Make `tool` fail with `stderr` when its command line contains `match`. */
  /** The next calls of `tool` whose command line contains `match` fail with `stderr`;
   * `removingTask`: and that task is gone when they fail (a race with another cleanup). */
  failWhen(
    tool: string,
    match: string,
    stderr: string,
    options?: { removingTask?: string },
  ): Promise<void>;
  /** Make an image resolvable by pulls, with its manifest in the content store. */
  publish(image: FakeImage, blobs?: Record<string, string>): Promise<void>;
  /** What `cuda-checkpoint --get-state --pid <pid>` answers from now on. */
  setCudaState(pid: number, state: "running" | "checkpointed"): Promise<void>;
  /** Forget the calls so far (what a test set up is not what it asserts). */
  forgetCalls(): Promise<void>;
  /** Store a blob as `ctr content get <digest>` serves it; returns its descriptor. */
  blob(mediaType: string, content: Uint8Array | string): Promise<BlobDescriptor>;
  /** Put an image in the local store as if it had been pulled before. */
  preload(ref: string, labels?: string): Promise<void>;
  /** The files `ctr images mount <ref> <target>` shows at target (path inside the image → content). */
  imageFiles(ref: string, files: Record<string, string>): Promise<void>;
  remove(): Promise<void>;
}

export async function installFakeTools(
  options: {
    pids?: number[];
    cudaState?: string;
    nonCudaPids?: number[];
    snapshotId?: string;
    /** Tasks exit as soon as they start (an engine that crashes at boot). */
    taskExits?: boolean;
    /** The host name `containers info` puts in HOSTNAME (ctr's --net-host does). */
    hostname?: string;
  } = {},
): Promise<FakeTools> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "thaw-fake-tools-"));
  const bin = path.join(dir, "bin");
  const state = path.join(dir, "state");
  await mkdir(bin);
  await mkdir(path.join(state, "blobs"), { recursive: true });
  await writeFile(path.join(state, "registry.txt"), "");
  await writeFile(path.join(state, "calls.log"), "");
  const script = path.join(bin, "fake-tool");
  await copyFile(SCRIPT_PATH, script);
  await chmod(script, 0o755);
  for (const name of ["ctr", "ctr-remote", "criu", "cuda-checkpoint"]) {
    await symlink(script, path.join(bin, name));
  }
  return {
    dir,
    env: {
      PATH: `${bin}:/usr/bin:/bin`,
      FAKE_STATE: state,
      FAKE_PIDS: (options.pids ?? [4242]).join(" "),
      FAKE_CUDA_STATE: options.cudaState ?? "checkpointed",
      FAKE_NON_CUDA_PIDS: (options.nonCudaPids ?? []).join(" "),
      FAKE_SNAPSHOT_ID: options.snapshotId ?? "",
      FAKE_TASK_EXITS: options.taskExits ? "1" : "",
      FAKE_HOSTNAME: options.hostname ?? "gpu-host-1",
    },
    async calls() {
      const text = await readFile(path.join(state, "calls.log"), "utf8");
      return text
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split("\t"));
    },
    async failWhen(tool, match, stderr, options = {}) {
      const gone = options.removingTask ?? "";
      await appendFile(path.join(state, "fail"), `${tool}\t${match}\t${stderr}\t${gone}\n`);
    },
    async publish(image, blobs = {}) {
      await appendFile(path.join(state, "registry.txt"), `${image.ref} ${image.digest}\n`);
      await writeFile(path.join(state, "blobs", image.digest), image.manifest);
      for (const [digest, content] of Object.entries(blobs)) {
        await writeFile(path.join(state, "blobs", digest), content);
      }
    },
    async forgetCalls() {
      await writeFile(path.join(state, "calls.log"), "");
    },
    async blob(mediaType, content) {
      const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
      const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
      await writeFile(path.join(state, "blobs", digest), bytes);
      return { mediaType, digest, size: bytes.length };
    },
    async setCudaState(pid, cudaState) {
      await mkdir(path.join(state, "cuda"), { recursive: true });
      await writeFile(path.join(state, "cuda", String(pid)), `${cudaState}\n`);
    },
    async preload(ref, labels = "-") {
      const registry = await readFile(path.join(state, "registry.txt"), "utf8");
      const digest = registry
        .split("\n")
        .find((l) => l.startsWith(`${ref} `))
        ?.split(" ")[1];
      await appendFile(
        path.join(state, "images.txt"),
        `${ref} ${digest ?? "sha256:" + "0".repeat(64)} ${labels}\n`,
      );
    },
    async imageFiles(ref, files) {
      const root = path.join(state, "rootfs", ref.replace(/[/:@]/g, "_"));
      for (const [file, content] of Object.entries(files)) {
        await mkdir(path.dirname(path.join(root, file)), { recursive: true });
        await writeFile(path.join(root, file), content);
      }
    },
    async remove() {
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A sha256 digest made of one repeated hex character (readable test fixtures). */
export const fakeDigest = (c: string) => `sha256:${c.repeat(64)}`;

/** An OCI manifest with a config and the given layer sizes. */
export function fakeManifest(
  configSize: number,
  layers: { digest: string; size: number }[],
): string {
  return JSON.stringify({
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: {
      mediaType: "application/vnd.oci.image.config.v1+json",
      digest: fakeDigest("f"),
      size: configSize,
    },
    layers: layers.map((l) => ({ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", ...l })),
  });
}
