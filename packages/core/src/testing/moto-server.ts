import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

// moto_server (the AWS API emulator) for core's integration tests (S3 model sources, ECR
// registry credentials), started as the scheduler's aws tests start it; infra/dev/lib.sh
// ensure_moto installs it (THAW_MOTO_SERVER). Tests only.

const DEFAULT_BINARY = fileURLToPath(
  new URL("../../../../.data/moto/bin/moto_server", import.meta.url),
);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export async function startMoto(): Promise<{ endpoint: string; child: ChildProcess }> {
  const binary = process.env.THAW_MOTO_SERVER ?? DEFAULT_BINARY;
  if (!existsSync(binary))
    throw new Error(
      `moto_server not found at ${binary}: run "bash -c 'source infra/dev/lib.sh; ensure_moto'" or set THAW_MOTO_SERVER.`,
    );
  const port = await freePort();
  const child = spawn(binary, ["-H", "127.0.0.1", "-p", String(port)], { stdio: "ignore" });
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited (${child.exitCode})`);
    const up = await fetch(`${endpoint}/moto-api/`).then(
      (r) => r.status < 500,
      () => false,
    );
    if (up) return { endpoint, child };
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error("moto_server did not answer within 30 s");
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Stops a moto_server started by startMoto. */
export async function stopMoto(moto: { child: ChildProcess } | undefined): Promise<void> {
  if (!moto || moto.child.exitCode !== null) return;
  const exited = new Promise((r) => moto.child.once("exit", r));
  moto.child.kill("SIGTERM");
  await exited;
}
