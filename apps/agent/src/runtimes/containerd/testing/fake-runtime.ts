import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { type ContainerdRuntimeConfig } from "../config.ts";
import { ContainerdRuntime } from "../containerd-runtime.ts";
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
  const runtime = new ContainerdRuntime({
    address: FAKE_SOCKET,
    toolEnv: tools.env,
    logDir,
    procSysDir,
    plainHttpRegistries: ["registry.test:5000"],
    stopGraceSeconds: 1,
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
        if (tool !== "ctr") return true;
        return !QUERIES.has(args.slice(4, 6).join(" "));
      });
    },
    async dispose() {
      await engine.close();
      await tools.remove();
    },
  };
}
