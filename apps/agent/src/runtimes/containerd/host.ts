import { readFile } from "node:fs/promises";
import path from "node:path";
import { PassThrough } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { type RegistryAuth, type ReplicaWarmup } from "@thaw/protocol";
import { type PhaseRecorder } from "../phase-recorder.ts";
import { type PhaseAttributes } from "../runtime.ts";
import { probeUntilReady, replicaRequest, type ProbeResult } from "../replica-http.ts";
import {
  type ContainerSpec,
  ctrCommands,
  LABEL_COLD_START,
  type CtrCommands,
  cudaCheckpointCommands,
  criuCommands,
  tarCommands,
} from "./commands.ts";
import { type ContainerdTimeouts, type ResolvedContainerdConfig } from "./config.ts";
import { imageBlobs, type ImageBlobs, registryHost } from "./image-blobs.ts";
import {
  parseDigestList,
  parseImageList,
  parseTaskList,
  parseTaskProcesses,
  type TaskStatus,
} from "./parse.ts";
import {
  credentialFor,
  pullAuthorization,
  repositoryOf,
  withPullHostsDir,
} from "./registry-auth.ts";
import { ContainerdApi } from "./api/containerd-api.ts";
import {
  runTool,
  ToolError,
  type RunToolOptions,
  type ToolCommand,
  type ToolResult,
} from "./run-tool.ts";

type RunOptions = Omit<RunToolOptions, "timeoutMs" | "env" | "what"> & {
  timeout?: keyof ContainerdTimeouts;
};

/** A task's state as the readiness probe checks it (undefined: there is no task). */
type TaskStatusOf = (containerId: string, signal?: AbortSignal) => Promise<TaskStatus | undefined>;

/** The containerd host as the start paths see it: tools, queries and the shared steps. */
export class ContainerdHost {
  readonly ctr: CtrCommands;
  readonly criu: ReturnType<typeof criuCommands>;
  readonly cuda: ReturnType<typeof cudaCheckpointCommands>;
  readonly tar: ReturnType<typeof tarCommands>;
  private apiClient: ContainerdApi | undefined;

  constructor(readonly config: ResolvedContainerdConfig) {
    this.ctr = ctrCommands(config.tools, { address: config.address, namespace: config.namespace });
    this.criu = criuCommands(config.tools);
    this.cuda = cudaCheckpointCommands(config.tools);
    this.tar = tarCommands(config.tools);
  }

  /** containerd's gRPC API on the same socket ctr uses (one connection, opened on first use). */
  get api(): ContainerdApi {
    this.apiClient ??=
      this.config.api ??
      new ContainerdApi(
        this.config.address,
        this.config.namespace,
        this.config.timeouts.querySeconds * 1000,
      );
    return this.apiClient;
  }

  private readonly ctrTaskStatus: TaskStatusOf = async (containerId, signal) =>
    (await this.tasks(signal)).get(containerId)?.status;

  /** A task's state over the API: one call, where `ctr tasks ls` is a process. */
  readonly apiTaskStatus: TaskStatusOf = (containerId, signal) =>
    this.api.taskStatus(containerId, opt(signal));

  run(command: ToolCommand, what: string, options: RunOptions = {}): Promise<ToolResult> {
    const { timeout = "querySeconds", ...rest } = options;
    return runTool(command, {
      ...rest,
      what,
      timeoutMs: this.config.timeouts[timeout] * 1000,
      ...(this.config.toolEnv ? { env: this.config.toolEnv } : {}),
    });
  }

  /**
   * `from | to` without a shell: the first tool's stdout streamed into the second's stdin, so
   * output larger than what a tool's result keeps in memory (a layer) goes straight through.
   * Either failing stops the other; the error thrown is the one that failed first (not its
   * partner's, stopped because of it).
   */
  async runPipe(
    from: { command: ToolCommand; what: string },
    to: { command: ToolCommand; what: string },
    options: RunOptions = {},
  ): Promise<void> {
    const stop = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
    const stream = new PassThrough();
    const failures: unknown[] = [];
    const settle = (running: Promise<ToolResult>) =>
      running.then(
        () => undefined,
        (error: unknown) => {
          failures.push(error);
          stop.abort();
        },
      );
    await Promise.all([
      settle(this.run(from.command, from.what, { ...options, signal, stdoutTo: stream })),
      settle(this.run(to.command, to.what, { ...options, signal, stdin: stream })),
    ]);
    if (failures.length > 0) throw failures[0];
  }

  /**
   * Runs a pull of `ref` from its registry (`command` built with the hosts directory that carries
   * the start's credential for that registry, if it has one: registry-auth.ts) and says plainly
   * when the registry wanted credentials the start did not carry, or refused the ones it did.
   * Nothing reported contains the secret.
   */
  async registryPull(
    ref: string,
    auths: readonly RegistryAuth[] | undefined,
    command: (hostsDir: string | undefined) => ToolCommand,
    what: string,
    options: RunOptions = {},
  ): Promise<ToolResult & { credential: boolean }> {
    const credential = credentialFor(ref, auths);
    const registry = registryHost(ref);
    const plainHttp = this.plainHttp(ref);
    try {
      if (!credential)
        return { ...(await this.run(command(undefined), what, options)), credential: false };
      const authorization = await pullAuthorization({
        credential,
        repository: repositoryOf(ref),
        plainHttp,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      const result = await withPullHostsDir(
        this.config.pullAuthDir,
        { registry, plainHttp, authorization: authorization.header },
        (hostsDir) =>
          this.run(command(hostsDir), what, { ...options, secrets: authorization.secrets }),
      );
      return { ...result, credential: true };
    } catch (error) {
      const refused =
        error instanceof ToolError &&
        /\b(401 Unauthorized|403 Forbidden)\b/.exec(error.details.stderr)?.[1];
      if (!refused) throw error;
      throw new Error(
        credential
          ? `registry ${registry} refused the credential this start carried for it (${refused}): check the org's registry credential for ${registry}. ${error.message}`
          : `registry ${registry} wants credentials to pull ${ref} (${refused}) and this start carried none: add a registry credential for ${registry} to the org. ${error.message}`,
        { cause: error },
      );
    }
  }

  plainHttp(ref: string): boolean {
    return this.config.plainHttpRegistries.includes(registryHost(ref));
  }

  logPath(containerId: string): string {
    return path.join(this.config.logDir, `${containerId}.log`);
  }

  // --- queries ---------------------------------------------------------------------------

  async tasks(signal?: AbortSignal): Promise<Map<string, { pid: number; status: TaskStatus }>> {
    const { stdout } = await this.run(this.ctr.taskList(), "list the tasks", opt(signal));
    return parseTaskList(stdout);
  }

  async taskProcesses(containerId: string, signal?: AbortSignal): Promise<number[]> {
    const { stdout } = await this.run(
      this.ctr.taskProcesses(containerId),
      `list the processes of ${containerId}`,
      opt(signal),
    );
    return parseTaskProcesses(stdout);
  }

  async contentDigests(signal?: AbortSignal): Promise<Set<string>> {
    const { stdout } = await this.run(
      this.ctr.contentList(),
      "list the content store",
      opt(signal),
    );
    return parseDigestList(stdout);
  }

  async imageRefs(signal?: AbortSignal): Promise<Set<string>> {
    const { stdout } = await this.run(this.ctr.imageListRefs(), "list the images", opt(signal));
    return new Set(
      stdout
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean),
    );
  }

  async imageDigest(ref: string, signal?: AbortSignal): Promise<string> {
    const { stdout } = await this.run(this.ctr.imageList(ref), `look up image ${ref}`, opt(signal));
    const digest = parseImageList(stdout).find((i) => i.ref === ref)?.digest;
    if (!digest) throw new Error(`image ${ref} is not in containerd after the pull`);
    return digest;
  }

  async imageBlobs(rootDigest: string, signal?: AbortSignal): Promise<ImageBlobs> {
    return imageBlobs(async (digest) => {
      const { stdout } = await this.run(this.ctr.contentGet(digest), `read ${digest}`, opt(signal));
      return stdout;
    }, rootDigest);
  }

  // --- shared steps ----------------------------------------------------------------------

  /**
   * create → start → (warmup) → ready, the tail of the pull and lazy paths, at plain ctr's
   * cost: one process (`ctr run -d`: container, task, start; it was `containers create` then
   * `tasks start`) and the probe's task checks over the API. `create` runs to the task's start;
   * `start` from there to the probe's first 200; `ready` is the zero-length marker.
   */
  async runAndProbe(
    rec: PhaseRecorder,
    spec: ContainerSpec,
    readiness: { port: number; path: string; timeoutSeconds: number },
    warmup: ReplicaWarmup | undefined,
    signal: AbortSignal | undefined,
    onCreated: () => void,
    /** Noted on the create phase (a kernel-cache fetch that failed just before it). */
    createAttributes: PhaseAttributes = {},
  ): Promise<ProbeResult> {
    const logPath = this.logPath(spec.id);
    await rec.run("create", async (scope) => {
      Object.assign(scope.attributes, createAttributes);
      try {
        const result = await this.run(this.ctr.containerRun(spec, logPath), "run the container", {
          timeout: "createSeconds",
          ...opt(signal),
          hint: `If a container ${spec.id} already exists, stop that replica first. Container log: ${logPath}`,
        });
        scope.attributes.ctrSeconds = result.seconds;
      } catch (error) {
        // ctr may have made the container before failing to start its task: a container of
        // this very start (its cold-start label) is then this start's to remove.
        const made = await this.api.container(spec.id, opt(signal)).catch(() => undefined);
        if (made?.labels[LABEL_COLD_START] === spec.labels[LABEL_COLD_START]) onCreated();
        throw error;
      }
      onCreated();
      scope.attributes.containerId = spec.id;
      if (spec.snapshotter) scope.attributes.snapshotter = spec.snapshotter;
    });
    const probe = await rec.run("start", async (scope) => {
      const result = await this.probe(spec.id, readiness, signal, this.apiTaskStatus);
      scope.attributes.probeAttempts = result.attempts;
      if (result.firstAnswerSeconds !== undefined) {
        scope.attributes.firstAnswerSeconds = result.firstAnswerSeconds;
      }
      return result;
    });
    await this.warmupAndReady(rec, readiness.port, warmup, signal);
    return probe;
  }

  /** Readiness probe that gives up early, with the container's last log lines, if the task exits. */
  async probe(
    containerId: string,
    readiness: { port: number; path: string; timeoutSeconds: number },
    signal: AbortSignal | undefined,
    taskStatus: TaskStatusOf = this.ctrTaskStatus,
  ): Promise<ProbeResult> {
    try {
      return await probeUntilReady({
        ...readiness,
        ...opt(signal),
        onWaiting: async () => {
          const status = await taskStatus(containerId, signal);
          if (!status || status === "STOPPED") {
            throw new Error(
              `the container's task ${status ? "exited" : "disappeared"} before it was ready`,
            );
          }
        },
      });
    } catch (error) {
      const log = await this.settledLogTail(containerId);
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(log ? `${message}; container log (last lines):\n${log}` : message, {
        cause: error,
      });
    }
  }

  async warmupAndReady(
    rec: PhaseRecorder,
    port: number,
    warmup: ReplicaWarmup | undefined,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    if (warmup) {
      await rec.run("warmup", async (scope) => {
        for (let i = 0; i < warmup.count; i++) {
          const answer = await replicaRequest(
            port,
            warmup.path,
            { method: warmup.method, ...(warmup.body === undefined ? {} : { body: warmup.body }) },
            { timeoutMs: this.config.timeouts.engineCallSeconds * 1000, ...opt(signal) },
          );
          if (answer.status < 200 || answer.status >= 300) {
            throw new Error(
              `warmup request ${i + 1} ${warmup.method} ${warmup.path} answered ${answer.status}: ${answer.body.slice(0, 300)}`,
            );
          }
        }
        scope.attributes.requests = warmup.count;
      });
    }
    rec.mark("ready", { port });
  }

  /**
   * Stops a task (SIGTERM, then SIGKILL after the grace period; `force`: SIGKILL at once) and
   * removes task and container. A paused task is resumed first so that it can handle SIGTERM.
   */
  async removeContainer(
    containerId: string,
    o: { graceSeconds: number; force?: boolean },
  ): Promise<{ found: boolean; signal: "SIGTERM" | "SIGKILL" | null }> {
    const task = (await this.tasks()).get(containerId);
    let signal: "SIGTERM" | "SIGKILL" | null = null;
    if (task && task.status !== "STOPPED") {
      let graceful = !o.force;
      if (graceful && (task.status === "PAUSED" || task.status === "PAUSING")) {
        graceful = await this.run(
          this.ctr.taskResume(containerId),
          "resume the paused task before stopping it",
        ).then(
          () => true,
          () => false,
        );
      }
      let stopped = false;
      if (graceful) {
        signal = "SIGTERM";
        await this.run(this.ctr.taskKill(containerId, "SIGTERM"), "signal the task to stop");
        stopped = await this.waitStopped(containerId, o.graceSeconds);
      }
      if (!stopped) {
        signal = "SIGKILL";
        await this.run(this.ctr.taskKill(containerId, "SIGKILL"), "kill the task");
        if (!(await this.waitStopped(containerId, 30))) {
          throw new Error(`task ${containerId} did not stop within 30 s of SIGKILL`);
        }
      }
    }
    if (task) {
      // Whatever else removed the task in the meantime (containerd's own cleanup of an exited
      // shim, an operator) left the state this call wants: only a task still there is an error.
      await this.run(this.ctr.taskDelete(containerId), "delete the task").catch(
        async (error: unknown) => {
          if ((await this.tasks()).has(containerId)) throw error;
        },
      );
    }
    const exists = await this.containerExists(containerId);
    if (exists) {
      await this.run(this.ctr.containerDelete(containerId), "delete the container").catch(
        async (error: unknown) => {
          if (await this.containerExists(containerId)) throw error;
        },
      );
    }
    return { found: task !== undefined || exists, signal };
  }

  private async containerExists(containerId: string): Promise<boolean> {
    const containers = await this.run(this.ctr.containerList(), "list the containers");
    return containers.stdout.split("\n").some((l) => l.trim() === containerId);
  }

  private async waitStopped(containerId: string, seconds: number): Promise<boolean> {
    const deadline = performance.now() + seconds * 1000;
    for (let interval = 20; ; interval = Math.min(250, interval * 1.5)) {
      const task = (await this.tasks()).get(containerId);
      if (!task || task.status === "STOPPED") return true;
      if (performance.now() >= deadline) return false;
      await sleep(interval);
    }
  }

  /**
   * The log tail of a task that just ended: the shim copies the task's output into the log
   * file on its own, and a task's exit can be seen before its last lines land there (a busy
   * host). An empty log is read again for up to ~8 s before it is taken as empty: ~0.75 s
   * was not enough on a CI machine running the whole suite (the task's one line came later),
   * and ~3 s was not either, once in two CI runs (2026-12-07). Only a failed start waits here,
   * only while its log is still empty, and a start that failed is minutes of work anyway.
   */
  private async settledLogTail(containerId: string): Promise<string> {
    for (const wait of [50, 100, 200, 400, 800, 1_500, 2_500, 2_500]) {
      const log = await this.logTail(containerId);
      if (log) return log;
      await sleep(wait);
    }
    return this.logTail(containerId);
  }

  async logTail(containerId: string, lines = 20): Promise<string> {
    try {
      const text = await readFile(this.logPath(containerId), "utf8");
      return text.trimEnd().split("\n").slice(-lines).join("\n");
    } catch {
      return "";
    }
  }
}

function opt(signal: AbortSignal | undefined): { signal?: AbortSignal } {
  return signal ? { signal } : {};
}
