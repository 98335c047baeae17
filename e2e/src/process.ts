import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// Child processes of the test stacks: a free port, a process whose output is kept for
// failure messages, and polling until something is true.

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

export function startProcess(
  name: string,
  cwd: string,
  command: string[],
  env: NodeJS.ProcessEnv,
  logs: string[],
): ChildProcess {
  const [bin, ...args] = command as [string, ...string[]];
  const child = spawn(bin, args, {
    cwd: join(root, cwd),
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const keep = (chunk: Buffer) => {
    logs.push(`[${name}] ${chunk.toString()}`);
    if (logs.length > 400) logs.shift();
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  return child;
}

export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  logs: string[],
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(
    `${what} did not happen within ${timeoutMs / 1000} s. Last output:\n${logs.slice(-40).join("")}`,
  );
}
