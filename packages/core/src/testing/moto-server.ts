import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

// moto (the AWS API emulator) for integration tests: a real `moto_server` process on a free
// loopback port, spoken to by the real AWS SDK clients (EC2 for the fleet, S3 for model
// sources, ECR for registry credentials). infra/dev/test.sh installs it (THAW_MOTO_SERVER);
// without it these tests fail and say how to get it.

const DEFAULT_BINARY = fileURLToPath(
  new URL("../../../../.data/moto/bin/moto_server", import.meta.url),
);

export interface MotoServer {
  endpoint: string;
  /** Dummy credentials: moto accepts any. */
  credentials: { accessKeyId: string; secretAccessKey: string };
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export async function startMotoServer(): Promise<MotoServer> {
  const binary = process.env.THAW_MOTO_SERVER ?? DEFAULT_BINARY;
  if (!existsSync(binary)) {
    throw new Error(
      `moto_server not found at ${binary}: run 'bash infra/dev/test.sh' (it installs moto into .data/moto) or set THAW_MOTO_SERVER.`,
    );
  }
  const port = await freePort();
  let output = "";
  const child: ChildProcess = spawn(binary, ["-H", "127.0.0.1", "-p", String(port)], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4_000)));
  child.stderr?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-4_000)));
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited: ${output.slice(-2000)}`);
    const up = await fetch(`${endpoint}/moto-api/`).then(
      (r) => r.status < 500,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`moto_server did not answer within 30 s: ${output.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    endpoint,
    credentials: { accessKeyId: "testing", secretAccessKey: "testing" },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
