import { type ToolCommand } from "./run-tool.ts";

// Every command line the containerd runtime runs, as exact argument arrays, in one place:
// tests assert them, and an operator can read here what the agent does on a host.

export interface ToolPaths {
  ctr: string;
  ctrRemote: string;
  criu: string;
  cudaCheckpoint: string;
  /** GNU tar: packs and unpacks kernel caches. */
  tar: string;
}

export const DEFAULT_TOOL_PATHS: ToolPaths = {
  ctr: "ctr",
  ctrRemote: "ctr-remote",
  criu: "criu",
  cudaCheckpoint: "cuda-checkpoint",
  tar: "tar",
};

export interface CtrTarget {
  /** containerd's gRPC socket. */
  address: string;
  namespace: string;
}

/** What restore needs of a container at create time (field notes §3): it is baked into the spec
 * and carried by the checkpoint, so the restored container gets the same. */
export const CHECKPOINT_CAPABILITIES = [
  "CAP_SYS_ADMIN",
  "CAP_SYS_PTRACE",
  "CAP_CHECKPOINT_RESTORE",
  "CAP_NET_ADMIN",
  "CAP_SYS_TIME",
  "CAP_SYS_RESOURCE",
  "CAP_DAC_READ_SEARCH",
] as const;

/** Thread pools pinned to one thread: CRIU's restorer crashes on many-threaded OpenMP/MKL pools. */
export const CHECKPOINT_ENV: Record<string, string> = {
  OMP_NUM_THREADS: "1",
  MKL_NUM_THREADS: "1",
};

/** runc reads extra CRIU options from the file this OCI annotation names (infra/agent/criu/runc.conf). */
export const CRIU_CONFIG_ANNOTATION = "org.criu.config";

export const LABEL_REPLICA = "thaw.replica-id";
export const LABEL_COLD_START = "thaw.cold-start-id";
export const LABEL_ESTARGZ = "thaw.estargz";
export const LABEL_SNAPSHOT = "thaw.snapshot-id";
/** On a kernel cache's image record (fetched or captured): not an image a replica runs. */
export const LABEL_KERNEL_CACHE = "thaw.kernel-cache-id";

/** A host directory bind-mounted into the container. */
export interface BindMount {
  source: string;
  destination: string;
}

export interface ContainerSpec {
  id: string;
  imageRef: string;
  /** Set for the lazy path: the stargz proxy snapshotter. */
  snapshotter?: string;
  labels: Record<string, string>;
  env: Record<string, string>;
  gpus: readonly number[];
  /** Capabilities + CRIU config annotation so that a snapshot can be captured later. */
  checkpointable?: { criuConfigPath: string };
  /** Host directories mounted read-write (the deployment's kernel-cache directory). */
  mounts?: readonly BindMount[];
  /** Replaces the image's entrypoint and command. */
  args?: readonly string[];
}

/** A pull's private hosts directory: how a registry credential reaches ctr (registry-auth.ts). */
const hostsDir = (dir: string | undefined) => (dir ? ["--hosts-dir", dir] : []);

/** The container a start makes: its spec flags, then image, id and the engine's arguments. */
function containerArgs(spec: ContainerSpec): string[] {
  const labelFlags = (labels: Record<string, string>) =>
    Object.entries(labels).flatMap(([k, v]) => ["--label", `${k}=${v}`]);
  const env = { ...(spec.checkpointable ? CHECKPOINT_ENV : {}), ...spec.env };
  return [
    "--net-host",
    // Tenant code runs here: no raw sockets (ARP/ICMP spoofing on the host network), and
    // the runtime's default seccomp profile, checkpointable containers included. ctr
    // builds containerd's default profile from the final capability set, so the
    // capabilities CRIU needs (CHECKPOINT_CAPABILITIES) bring exactly their syscalls
    // (ptrace, process_vm_readv, kcmp, setns, mount, ...) and nothing else; CRIU dumps a
    // filtered task with PTRACE_O_SUSPEND_SECCOMP and restores its filter (Linux >= 4.3).
    // NoNewPrivileges is on by default (ctr's --allow-new-privs is never passed).
    "--cap-drop",
    "CAP_NET_RAW",
    "--seccomp",
    ...(spec.snapshotter ? ["--snapshotter", spec.snapshotter] : []),
    ...labelFlags(spec.labels),
    ...Object.entries(env).flatMap(([k, v]) => ["--env", `${k}=${v}`]),
    ...(spec.mounts ?? []).flatMap((m) => [
      "--mount",
      `type=bind,src=${m.source},dst=${m.destination},options=rbind:rw`,
    ]),
    ...spec.gpus.flatMap((gpu) => ["--gpus", String(gpu)]),
    ...(spec.checkpointable
      ? [
          ...CHECKPOINT_CAPABILITIES.flatMap((cap) => ["--cap-add", cap]),
          "--annotation",
          `${CRIU_CONFIG_ANNOTATION}=${spec.checkpointable.criuConfigPath}`,
        ]
      : []),
    // ctr's flag parser (urfave/cli v1) moves flags found after the positional arguments
    // to the front: without the terminator, an engine's `--port 8000` or `sh -c …` was
    // read as ctr's own flags and the create failed.
    "--",
    spec.imageRef,
    spec.id,
    ...(spec.args ?? []),
  ];
}

export function ctrCommands(tools: ToolPaths, target: CtrTarget) {
  const ctr = (...args: string[]): ToolCommand => ({
    file: tools.ctr,
    args: ["-a", target.address, "-n", target.namespace, ...args],
  });
  const plain = (plainHttp: boolean) => (plainHttp ? ["--plain-http"] : []);

  return {
    // --- images and content --------------------------------------------------------------
    contentList: () => ctr("content", "ls", "-q"),
    contentGet: (digest: string) => ctr("content", "get", digest),
    imageList: (ref?: string) => ctr("images", "ls", ...(ref ? [`name==${ref}`] : [])),
    imageListRefs: () => ctr("images", "ls", "-q"),
    /** pull path: fetch, decompress and unpack into the default (overlayfs) snapshotter. */
    imagePull: (ref: string, o: { plainHttp: boolean; hostsDir?: string }) =>
      ctr("images", "pull", ...plain(o.plainHttp), ...hostsDir(o.hostsDir), ref),
    /** Drops the image record; containerd's garbage collector frees its blobs in the background. */
    imageRemove: (ref: string) => ctr("images", "rm", ref),
    /** A read-only view of the image's unpacked layers at `target` (restore: weights staging). */
    imageMount: (ref: string, target: string) => ctr("images", "mount", ref, target),
    /** Unmounts it and removes the view snapshot the mount made. */
    imageUnmount: (target: string) => ctr("images", "unmount", "--rm", target),
    imageLabel: (ref: string, key: string, value: string) =>
      ctr("images", "label", ref, `${key}=${value}`),
    imagePush: (ref: string, o: { plainHttp: boolean }) =>
      ctr("images", "push", ...plain(o.plainHttp), ref),

    // --- kernel caches (kernel-cache.ts) ---------------------------------------------------
    /** A stored cache from the operator's store by digest, into the content store only. */
    kernelCacheFetch: (ref: string, kernelCacheId: string, o: { plainHttp: boolean }) =>
      ctr(
        "content",
        "fetch",
        ...plain(o.plainHttp),
        "--label",
        `${LABEL_KERNEL_CACHE}=${kernelCacheId}`,
        ref,
      ),
    /** An OCI image-layout tar read from stdin, as the image its index names; never unpacked. */
    imageImportFromStdin: () => ctr("images", "import", "--no-unpack", "--all-platforms", "-"),

    // --- containers and tasks ------------------------------------------------------------
    /** Host networking: the readiness probe and the engine calls go to 127.0.0.1:<port>. */
    containerCreate: (spec: ContainerSpec) => ctr("containers", "create", ...containerArgs(spec)),
    /**
     * `containers create` + `tasks start -d` in one process (the pull path): the same container
     * and spec, its task started detached with stdout/stderr in `logPath`.
     */
    containerRun: (spec: ContainerSpec, logPath: string) =>
      ctr("run", "--detach", "--log-uri", `file://${logPath}`, ...containerArgs(spec)),
    taskList: () => ctr("tasks", "ls"),
    taskProcesses: (id: string) => ctr("tasks", "ps", id),
    taskKill: (id: string, signal: "SIGTERM" | "SIGKILL") => ctr("tasks", "kill", "-s", signal, id),
    taskDelete: (id: string) => ctr("tasks", "delete", id),
    containerDelete: (id: string) => ctr("containers", "delete", id),
    /** The container record as JSON: its runtime and the OCI spec containerd built for it. */
    containerInfo: (id: string) => ctr("containers", "info", id),
    containerList: () => ctr("containers", "ls", "-q"),

    // --- warm path -------------------------------------------------------------------------
    taskPause: (id: string) => ctr("tasks", "pause", id),
    taskResume: (id: string) => ctr("tasks", "resume", id),

    // --- restore path ------------------------------------------------------------------------
    /** CRIU dump through runc (options from the org.criu.config file); the task keeps running. */
    checkpointCreate: (id: string, checkpointRef: string) =>
      ctr("containers", "checkpoint", "--task", "--rw", id, checkpointRef),
    /** Fetch a checkpoint image from the snapshot store without unpacking it. */
    checkpointFetch: (checkpointRef: string, snapshotId: string, o: { plainHttp: boolean }) =>
      ctr(
        "content",
        "fetch",
        ...plain(o.plainHttp),
        "--all-platforms",
        "--label",
        `${LABEL_SNAPSHOT}=${snapshotId}`,
        checkpointRef,
      ),
    /**
     * Recreate the container from the checkpoint (spec, image, rw layer) and CRIU-restore its
     * task. ctr takes the spec, runtime and image from the checkpoint: the restore path runs
     * this only after checking them against a container it built itself (checkpoint-spec.ts).
     */
    containerRestore: (id: string, checkpointRef: string) =>
      ctr("containers", "restore", "--live", "--rw", id, checkpointRef),
  };
}

export type CtrCommands = ReturnType<typeof ctrCommands>;

/** lazy path: pull through the stargz snapshotter (metadata, then prefetch of the landmark files). */
export function remotePull(
  tools: ToolPaths,
  target: CtrTarget,
  ref: string,
  o: { plainHttp: boolean; snapshotter: string; hostsDir?: string },
): ToolCommand {
  return {
    file: tools.ctrRemote,
    args: [
      "-a",
      target.address,
      "-n",
      target.namespace,
      "images",
      "rpull",
      ...(o.plainHttp ? ["--plain-http"] : []),
      ...hostsDir(o.hostsDir),
      "--snapshotter",
      o.snapshotter,
      "--label",
      `${LABEL_ESTARGZ}=true`,
      ref,
    ],
  };
}

/** GNU tar, for kernel caches: numeric owners (the engine's uid, not a name this host maps). */
export const tarCommands = (tools: ToolPaths) => ({
  /** The directory's contents into one uncompressed tar file, in name order. */
  packDirectory: (dir: string, file: string): ToolCommand => ({
    file: tools.tar,
    args: ["--create", "--file", file, "--directory", dir, "--numeric-owner", "--sort=name", "."],
  }),
  /** An OCI image layout directory, as the tar stream `ctr images import` reads. */
  streamLayout: (dir: string): ToolCommand => ({
    file: tools.tar,
    args: ["--create", "--file", "-", "--directory", dir, "oci-layout", "index.json", "blobs"],
  }),
  /**
   * A tar stream into `dir`. GNU tar refuses members with `..` and strips leading slashes, and
   * defers symlinks that point out of the tree until every file is written, so a member never
   * lands outside `dir` through one.
   */
  extractInto: (dir: string): ToolCommand => ({
    file: tools.tar,
    args: ["--extract", "--file", "-", "--directory", dir, "--numeric-owner"],
  }),
});

export const criuCommands = (tools: ToolPaths) => ({
  /** Kernel support for checkpoint/restore (fails e.g. on a vdso mismatch). */
  check: (): ToolCommand => ({ file: tools.criu, args: ["check"] }),
});

export const cudaCheckpointCommands = (tools: ToolPaths) => ({
  getState: (pid: number): ToolCommand => ({
    file: tools.cudaCheckpoint,
    args: ["--get-state", "--pid", String(pid)],
  }),
  /** running → checkpointed (GPU memory to host) or checkpointed → running (back to the GPU). */
  toggle: (pid: number): ToolCommand => ({
    file: tools.cudaCheckpoint,
    args: ["--toggle", "--pid", String(pid)],
  }),
});
