import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { ContainerdApi } from "../api/containerd-api.ts";
import { type ContainerdRuntimeConfig } from "../config.ts";
import { ContainerdRuntime } from "../containerd-runtime.ts";
import { startFakeContainerdApi } from "./fake-containerd-api.ts";
import { startFakeEngine, type FakeEngine } from "./fake-engine.ts";
import { installFakeTools, type FakeTools } from "./fake-tools.ts";

export const FAKE_SOCKET = "/run/thaw-test/containerd.sock";
/** The global flags every fake ctr call starts with. */
export const G = ["-a", FAKE_SOCKET, "-n", "thaw"];

export interface FakeSetup {
  tools: FakeTools;
  engine: FakeEngine;
  runtime: ContainerdRuntime;
  procSysDir: string;
  logDir: string;
  /** The fake tools' calls, minus the runtime's read-only queries (to read sequences easily). */
  actions(): Promise<string[][]>;
  dispose(): Promise<void>;
}

const QUERIES = new Set([
  "tasks ls",
  "tasks ps",
  "content ls",
  "content get",
  "images ls",
  "containers ls",
  "containers info",
]);
/** containerd API calls that only read (the pull's checks, the probe's task state). */
const API_QUERIES = new Set([
  "Content.List",
  "Content.Read",
  "Images.Get",
  "Containers.Get",
  "Tasks.Get",
]);

export async function setupFakeRuntime(
  options: Parameters<typeof installFakeTools>[0] & {
    config?: Partial<ContainerdRuntimeConfig>;
  } = {},
): Promise<FakeSetup> {
  const tools = await installFakeTools(options);
  const engine = await startFakeEngine();
  const procSysDir = path.join(tools.dir, "proc-sys");
  await mkdir(path.join(procSysDir, "kernel"), { recursive: true });
  await writeFile(path.join(procSysDir, "kernel", "io_uring_disabled"), "2\n");
  const logDir = path.join(tools.dir, "logs");
  const state = tools.env.FAKE_STATE!;
  const containerd = await startFakeContainerdApi(state, tools.env);
  const api = new ContainerdApi(containerd.socket, "thaw");
  const runtime = new ContainerdRuntime({
    address: FAKE_SOCKET,
    api,
    toolEnv: tools.env,
    logDir,
    procSysDir,
    plainHttpRegistries: ["registry.test:5000"],
    stopGraceSeconds: 1,
    kernelCacheDir: path.join(tools.dir, "kernel-caches"),
    ...options.config,
  });
  return {
    tools,
    engine,
    runtime,
    procSysDir,
    logDir,
    async actions() {
      return (await tools.calls()).filter((call) => {
        const [tool, ...args] = call;
        if (tool === "api") return !API_QUERIES.has(args[0] ?? "");
        if (tool !== "ctr") return true;
        return !QUERIES.has(args.slice(4, 6).join(" "));
      });
    },
    async dispose() {
      api.close();
      await containerd.close();
      await engine.close();
      await tools.remove();
    },
  };
}
