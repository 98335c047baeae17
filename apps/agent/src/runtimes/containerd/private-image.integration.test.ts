import { randomUUID } from "node:crypto";
import { mkdir, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { type StartReplicaRequestInput } from "@thaw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PhaseEvent, PhaseFailedError } from "../runtime.ts";
import { ContainerdRuntime } from "./containerd-runtime.ts";
import {
  ensureContainerTools,
  type LocalStack,
  mountPointsUnder,
  startLocalStack,
  TEST_REGISTRY_AUTH,
} from "./testing/local-stack.ts";

// Issue 19: the agent pulls private images. A real containerd and a docker-registry behind
// htpasswd auth: refused without credentials, pulled with them, and the password is on no
// command line, in no error, event or containerd log, and in no file once the start is over.

const isRoot = process.getuid?.() === 0;
if (!isRoot) console.warn("private image integration tests skipped: containerd needs root");

describe.skipIf(!isRoot)("containerd runtime, private registry (htpasswd)", () => {
  let stack: LocalStack;
  let runtime: ContainerdRuntime;
  let pullAuthDir: string;
  const { username, password } = TEST_REGISTRY_AUTH;
  const basicForm = Buffer.from(`${username}:${password}`).toString("base64");

  beforeAll(async () => {
    await ensureContainerTools();
    stack = await startLocalStack({ imageName: "private/probe", basicAuth: TEST_REGISTRY_AUTH });
    pullAuthDir = path.join(stack.dir, "pull-auth");
    await mkdir(pullAuthDir, { mode: 0o700 });
    runtime = new ContainerdRuntime({
      address: stack.address,
      namespace: stack.namespace,
      logDir: stack.logDir,
      plainHttpRegistries: [stack.registryHost],
      pullAuthDir,
      stopGraceSeconds: 1,
    });
  }, 900_000);

  afterAll(async () => {
    const dir = stack?.dir;
    await stack?.stop();
    if (dir) expect(await mountPointsUnder(dir)).toEqual([]);
  }, 120_000);

  const request = (
    overrides: Partial<StartReplicaRequestInput> = {},
  ): StartReplicaRequestInput => ({
    replicaId: randomUUID(),
    coldStartId: randomUUID(),
    path: "pull",
    deployment: { imageRef: stack.image.ref, imageDigest: stack.image.digest },
    gpus: [],
    readiness: { port: stack.image.httpPort, path: stack.image.readinessPath, timeoutSeconds: 20 },
    ...overrides,
  });

  /** Every command line on the host while `during` runs, sampled every few milliseconds. */
  async function commandLinesDuring<T>(
    during: () => Promise<T>,
  ): Promise<{ result: T; lines: Set<string> }> {
    const lines = new Set<string>();
    let running = true;
    const sample = (async () => {
      while (running) {
        for (const pid of await readdir("/proc").catch(() => [] as string[])) {
          if (!/^\d+$/.test(pid)) continue;
          const line = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
          if (line) lines.add(line.replaceAll("\0", " "));
        }
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    try {
      return { result: await during(), lines };
    } finally {
      running = false;
      await sample;
    }
  }

  it("fails the pull without credentials, saying the registry wants them", async () => {
    const req = request();
    const error = await runtime.startReplica(req, () => undefined).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PhaseFailedError);
    expect((error as PhaseFailedError).phase).toBe("pull");
    expect((error as PhaseFailedError).message).toMatch(
      new RegExp(
        `registry ${stack.registryHost.replaceAll(".", "\\.")} wants credentials .*401 Unauthorized.*carried none`,
      ),
    );
  });

  it("fails with a wrong password, saying the credential was refused, without repeating it", async () => {
    const wrong = "wrong-password-7d1a";
    const req = request({
      registryAuth: [{ registry: stack.registryHost, username, password: wrong }],
    });
    const events: PhaseEvent[] = [];
    const error = await runtime.startReplica(req, (e) => events.push(e)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PhaseFailedError);
    const message = (error as PhaseFailedError).message;
    expect(message).toMatch(
      /refused the credential this start carried for it \(401 Unauthorized\)/,
    );
    for (const secret of [wrong, Buffer.from(`${username}:${wrong}`).toString("base64")]) {
      expect(message).not.toContain(secret);
      expect(JSON.stringify(events)).not.toContain(secret);
    }
    expect(await readdir(pullAuthDir)).toEqual([]);
  });

  it("pulls and runs with the credential, which stays off every command line and out of every report", async () => {
    const req = request({
      registryAuth: [
        { registry: "ghcr.io", username: "other", password: "not-this-one" },
        {
          registry: stack.registryHost,
          username,
          password,
          expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
        },
      ],
    });
    const events: PhaseEvent[] = [];
    const { result: started, lines } = await commandLinesDuring(() =>
      runtime.startReplica(req, (e) => events.push(e)),
    );
    expect(started.readiness.status).toBe(200);
    const pull = events.find((e) => e.phase === "pull");
    expect(pull?.attributes).toMatchObject({
      registryCredential: true,
      imageDigest: stack.image.digest,
    });
    expect(pull?.bytes).toBe(stack.image.bytes);

    // ctr ran with a hosts directory, and no command line ever held the password.
    const pulls = [...lines].filter((l) => l.includes(" images pull "));
    expect(pulls.some((l) => l.includes(`--hosts-dir ${pullAuthDir}/`))).toBe(true);
    for (const line of lines) {
      expect(line).not.toContain(password);
      expect(line).not.toContain(basicForm);
    }
    expect(JSON.stringify(events)).not.toContain(password);
    expect(JSON.stringify(events)).not.toContain(basicForm);
    // The hosts directory is gone; containerd's log never saw the secret.
    expect(await readdir(pullAuthDir)).toEqual([]);
    const containerdLog = await readFile(path.join(stack.dir, "containerd.log"), "utf8");
    expect(containerdLog).not.toContain(password);
    expect(containerdLog).not.toContain(basicForm);

    await runtime.stopReplica(req.replicaId);
  });
});
