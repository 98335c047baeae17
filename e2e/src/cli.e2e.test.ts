import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pushTinyImage, startTestRegistry, type TestRegistry } from "@thaw/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHubStandIn, type HubStandIn } from "./hub-stand-in.ts";
import { startStack, type Stack } from "./stack.ts";

// The `thaw` CLI as a user runs it: a process against the built server, a scheduler and sim
// hosts. Every command goes through the REST API (admin commands through the database).

const root = join(import.meta.dirname, "..", "..");

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe("the thaw CLI against a live stack", () => {
  let stack: Stack;
  let registry: TestRegistry;
  let hub: HubStandIn;
  let home: string;
  let key: string;

  /** Runs `thaw …` with a home of its own; THAW_URL points at the stack. */
  const thaw = (args: string[], o: { input?: string; env?: Record<string, string> } = {}) =>
    new Promise<Run>((resolve) => {
      const child = spawn(process.execPath, ["--import", "tsx", "apps/cli/src/main.ts", ...args], {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? "",
          HOME: home,
          XDG_CONFIG_HOME: join(home, ".config"),
          THAW_URL: stack.baseUrl,
          ...o.env,
        },
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      child.stdin.end(o.input ?? "");
      child.once("exit", (code) => resolve({ code, stdout, stderr }));
    });
  const db = () => stack.database.db;

  beforeAll(async () => {
    registry = await startTestRegistry();
    hub = await startHubStandIn({
      "Qwen/Qwen2.5-0.5B-Instruct": {
        sha: "7ae557604adf67be50417f59c2c2f167def9a775",
        files: { "model.safetensors": 988_097_824, "config.json": 659 },
      },
    });
    stack = await startStack({
      simHosts: "g5.xlarge:1,g6e.xlarge:2",
      webEnv: { THAW_TRUSTED_REGISTRIES: registry.host, THAW_HF_ENDPOINT: hub.endpoint },
    });
    home = mkdtempSync(join(tmpdir(), "thaw-cli-home-"));
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([registry?.stop(), hub?.stop()]);
  });

  it("admin api-key create makes a key from the database and prints only it", async () => {
    const made = await thaw(
      [
        "admin",
        "api-key",
        "create",
        "--org",
        "demo",
        "--name",
        "cli",
        "--scope",
        "endpoints:read",
        "endpoints:write",
        "endpoints:scale",
        "deployments:write",
      ],
      { env: { DATABASE_URL: stack.database.url } },
    );
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/^thaw_[0-9a-f]{12}_\S+\n$/);
    key = made.stdout.trim();
    const bad = await thaw(
      ["admin", "api-key", "create", "--org", "demo", "--name", "x", "--scope", "root"],
      { env: { DATABASE_URL: stack.database.url } },
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/unknown scope root.*\(field: scope\)/);
  });

  it("login checks the key and keeps it for its owner alone", async () => {
    const refused = await thaw(["login", "--key-stdin"], {
      input: "thaw_000000000000_notarealkeynotarealkeynotreal\n",
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: Unknown, revoked or expired API key/);
    const ok = await thaw(["login", "--key-stdin"], { input: `${key}\n` });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/Logged in to .*: the key sees 4 endpoints/);
    const path = join(home, ".config", "thaw", "config.json");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ url: stack.baseUrl, key });
  });

  it("lists and shows endpoints, as text and as JSON, with the stored key", async () => {
    const list = await thaw(["endpoints", "list"], { env: { THAW_URL: "" } });
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^SLUG\s+GPU/);
    expect(list.stdout).toContain("meta-llama-3-8b");
    const json = await thaw(["--json", "endpoints", "list"]);
    const parsed = JSON.parse(json.stdout) as { endpoints: { slug: string }[] };
    expect(parsed.endpoints.map((e) => e.slug).sort()).toContain("llama-3-2-1b-gguf");
    const one = await thaw(["endpoints", "get", "meta-llama-3-8b"]);
    expect(one.stdout).toMatch(/^meta-llama-3-8b — /);
    expect(one.stdout).toMatch(/deployment: {2}v1 /);
  });

  it("says what went wrong and exits non-zero: the API's message and field", async () => {
    const missing = await thaw(["endpoints", "get", "nope"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe("error: No endpoint 'nope'. (field: endpoint)\n");
    const bounds = await thaw(["scale", "llama-3-2-1b-gguf", "99"]);
    expect(bounds.code).toBe(1);
    expect(bounds.stderr).toMatch(/outside this endpoint's bounds 0–4.*\(field: body\.replicas\)/);
    const usage = await thaw(["scale", "llama-3-2-1b-gguf", "two"]);
    expect(usage.code).not.toBe(0);
    expect(usage.stderr).toMatch(/replicas must be a whole number/);
  });

  it("applies a file: creates, then changes nothing, patches, rolls, and dry-runs", async () => {
    const dir = mkdtempSync(join(tmpdir(), "thaw-apply-"));
    const file = join(dir, "endpoint.yaml");
    const spec = (maxReplicas: number, image: string) => `# a Thaw endpoint
slug: cli-qwen
name: Qwen 2.5 0.5B (CLI)
gpuType: L40S
minReplicas: 0
maxReplicas: ${maxReplicas}
# No snapshots: a capture would replace the serving replica mid-test (a second start).
allowedPaths: [warm, lazy, pull]
deployment:
  imageRef: registry.example.com/vllm-openai:${image}
  imageBytes: 7700000000
  modelSource: hf://Qwen/Qwen2.5-0.5B-Instruct
  modelBytes: 1000000000
  modelFormat: safetensors
  engine: vllm
  engineProfile:
    warmupSeconds: 5
`;
    writeFileSync(file, spec(2, "v0.11.0"));
    const created = await thaw(["apply", "-f", file]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^\+ endpoint cli-qwen \(new\)/);
    expect(created.stdout).toMatch(/cli-qwen: created cli-qwen with deployment v1\.\n$/);

    const writes = async () => ({
      audit: await db().auditLog.count(),
      deployments: await db().deployment.count(),
      version: (await db().endpoint.findFirstOrThrow({ where: { slug: "cli-qwen" } })).version,
    });
    const before = await writes();
    const again = await thaw(["apply", "-f", file]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe("= endpoint cli-qwen: no changes\n");
    expect(await writes()).toEqual(before);

    writeFileSync(file, spec(3, "v0.11.0"));
    const dry = await thaw(["apply", "-f", file, "--dry-run"]);
    expect(dry.stdout).toBe(
      "~ endpoint cli-qwen (configuration)\n  ~ maxReplicas: 2 → 3\n(dry run: nothing was changed)\n",
    );
    expect(await writes()).toEqual(before);
    const patched = await thaw(["apply", "-f", file]);
    expect(patched.stdout).toMatch(/cli-qwen: updated maxReplicas\.\n$/);
    expect((await writes()).deployments).toBe(before.deployments);

    writeFileSync(file, spec(3, "v0.12.0"));
    const rolled = await thaw(["--json", "apply", "-f", file]);
    expect(JSON.parse(rolled.stdout)).toMatchObject({
      slug: "cli-qwen",
      applied: true,
      diff: [{ field: "deployment.imageRef", to: "registry.example.com/vllm-openai:v0.12.0" }],
    });
    expect((await writes()).deployments).toBe(before.deployments + 1);

    writeFileSync(file, spec(3, "v0.12.0").replace("gpuType: L40S", "gpuType: A10G"));
    const fixed = await thaw(["apply", "-f", file]);
    expect(fixed.code).toBe(1);
    expect(fixed.stderr).toMatch(/gpuType is L40S .* cannot change .*\(field: file\.gpuType\)/);
    writeFileSync(file, spec(3, "v0.12.0").replace("maxReplicas: 3", "maxReplicas: many"));
    const invalid = await thaw(["apply", "-f", file]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/\(field: file\.maxReplicas\)/);
  });

  it("applies a file that names only the image and the model: the server finds the rest", async () => {
    const imageRef = await pushTinyImage(registry, "team/qwen", "v1", "import vllm\n");
    const file = join(mkdtempSync(join(tmpdir(), "thaw-apply-")), "endpoint.yaml");
    writeFileSync(
      file,
      `slug: cli-from-reference
name: Qwen from a reference (CLI)
gpuType: L40S
deployment:
  imageRef: ${imageRef}
  modelSource: hf://Qwen/Qwen2.5-0.5B-Instruct
  engine: vllm
`,
    );
    const created = await thaw(["apply", "-f", file]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/created cli-from-reference with deployment v1\.\n$/);
    const shown = await thaw(["endpoints", "get", "cli-from-reference"]);
    expect(shown.stdout).toContain(
      `${imageRef} (0.0 GB), hf://Qwen/Qwen2.5-0.5B-Instruct (1.0 GB)`,
    );
    const stored = await db().deployment.findFirstOrThrow({
      where: { endpoint: { slug: "cli-from-reference" } },
    });
    expect(stored).toMatchObject({
      imageBytes: BigInt("import vllm\n".length * 1_000),
      modelBytes: 988_097_824n,
      modelFormat: "safetensors",
    });
    expect(stored.imageDigest).toMatch(/^sha256:[a-f0-9]{64}$/);
    // What the server found is not a difference: the file names only what it sets.
    const again = await thaw(["apply", "-f", file]);
    expect(again.stdout).toBe("= endpoint cli-from-reference: no changes\n");
  });

  it("watches a cold start land phase by phase, and reports status and predictions", async () => {
    const watch = thaw(["cold-starts", "watch", "cli-qwen", "--count", "1", "--timeout", "120"]);
    // The watch subscribes before the scale-up it is to see.
    await new Promise((r) => setTimeout(r, 2_500));
    const scaled = await thaw(["scale", "cli-qwen", "1"]);
    expect(scaled.stdout).toBe("cli-qwen: desired replicas 0 → 1.\n");
    const watched = await watch;
    console.log(`thaw cold-starts watch cli-qwen:\n${watched.stderr}${watched.stdout}`);
    expect(watched.code, watched.stderr).toBe(0);
    const lines = watched.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^cli-qwen [0-9a-f]{8} (pull|lazy|restore|warm) /);
    // Once, why its path won and what the other paths would have taken.
    expect(lines[1]).toMatch(/^ {2}why (pull|lazy|restore|warm)( \(exploring\))?: /);
    expect(lines[2]).toMatch(/^ {2}weighed: .*(✗|\d+\.\ds on )/);
    // The predicted mean and its p10–p90 interval, as the start kept them at placement.
    expect(lines.at(-1)).toMatch(
      / {2}✓ ready {2}predicted \d+\.\ds \(p10–p90 \d+\.\d–\d+\.\ds\), actual \d+\.\ds {2}\S/,
    );
    expect(watched.stdout).toMatch(/(pull|prefetch|restore|handover) █+ \d+\.\ds/);

    const status = await thaw(["status", "cli-qwen"]);
    expect(status.stdout).toMatch(/^cli-qwen: desired 1 \(min 0, max 3\)/);
    expect(status.stdout).toMatch(/time to ready: p50 \d+\.\ds, p95 \d+\.\ds over 1 starts/);
    // The predictor's calibration rests on the same succeeded starts (each kept its interval).
    expect(status.stdout).toMatch(
      /predictions: \d+% inside p10–p90 over 1 starts \(too-few-starts\)/,
    );
    // The replica is marked ready by the same telemetry, a moment after its start closes.
    await expect
      .poll(async () => (await thaw(["status", "cli-qwen"])).stdout, { timeout: 15_000 })
      .toMatch(/replicas: 1 ready/);
    const predictions = await thaw(["predictions", "cli-qwen"]);
    expect(predictions.stdout).toMatch(/^PATH\s+MEAN\s+P90/m);
    // Every path answers: seconds where it could start now, else why not (here the fleet's
    // L40S hosts are busy).
    for (const path of ["warm", "wake", "restore", "peer", "lazy", "pull"])
      expect(predictions.stdout).toMatch(new RegExp(`^${path}\\s+(\\d+\\.\\ds|-\\s.*\\S)`, "m"));
    expect(predictions.stdout).toMatch(/^pull .*(\d+\.\ds|free GPU)/m);
  });

  it("fails a watch on a failed start when asked (a CI gate), and deletes", async () => {
    const timedOut = await thaw([
      "cold-starts",
      "watch",
      "cli-qwen",
      "--count",
      "1",
      "--timeout",
      "2",
    ]);
    expect(timedOut.code).toBe(1);
    expect(timedOut.stderr).toMatch(
      /0 of 1 cold starts of cli-qwen finished before the 2s timeout/,
    );

    // A start that fails: back to zero, then a deployment whose image reference no agent
    // takes (written as a row: the API refuses such references, rows from before may hold
    // them), so its next start fails at dispatch.
    expect((await thaw(["scale", "cli-qwen", "0"])).code).toBe(0);
    const endpoint = await db().endpoint.findFirstOrThrow({
      where: { slug: "cli-qwen", deletedAt: null },
    });
    await expect
      .poll(
        () =>
          db().replica.count({
            where: { endpointId: endpoint.id, state: { notIn: ["stopped", "failed"] } },
          }),
        { timeout: 30_000 },
      )
      .toBe(0);
    await db().deployment.update({
      where: { id: endpoint.activeDeploymentId! },
      data: { imageRef: "-k/vllm-openai" },
    });
    const gate = thaw(["cold-starts", "watch", "cli-qwen", "--fail-on-error", "--timeout", "60"]);
    await new Promise((r) => setTimeout(r, 2_500));
    expect((await thaw(["scale", "cli-qwen", "1"])).code).toBe(0);
    const gated = await gate;
    console.log(`thaw cold-starts watch cli-qwen --fail-on-error:\n${gated.stderr}${gated.stdout}`);
    expect(gated.code, gated.stderr).toBe(1);
    expect(gated.stdout).toMatch(/ ✗ failed.*image_refused/);
    expect(gated.stderr).toMatch(
      /^error: cold start [0-9a-f-]{36} of cli-qwen failed.*: not started: image_refused: /m,
    );

    const deleted = await thaw(["endpoints", "delete", "cli-qwen"]);
    expect(deleted.stdout).toMatch(/^Deleted cli-qwen/);
    expect((await thaw(["endpoints", "get", "cli-qwen"])).code).toBe(1);
  });

  it("admin node: rotates a live agent's credential end to end, binds a join token, drains and revokes", async () => {
    const admin = (args: string[]) =>
      thaw(["admin", "node", ...args, "--org", "demo"], {
        env: { DATABASE_URL: stack.database.url },
      });
    const listed = await admin(["list"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/^ID\s+NAME\s+STATE\s+CREDENTIAL/);
    expect(listed.stdout).toMatch(/e2e-g6e-xlarge-2\s+ready\s+active/);

    // Rotation through the real sim agent and the built server: the heartbeat asks, the agent
    // fetches a new credential and uses it, which retires the old one.
    const name = "e2e-g6e-xlarge-2";
    const before = await db().node.findFirstOrThrow({ where: { name } });
    const rotated = await admin(["rotate", "--node", name]);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toMatch(/fetches a new credential/);
    await expect
      .poll(
        async () => {
          const node = await db().node.findFirstOrThrow({ where: { name } });
          return (
            node.credentialRotationRequestedAt === null &&
            node.credentialHash !== before.credentialHash
          );
        },
        { timeout: 30_000 },
      )
      .toBe(true);
    await expect
      .poll(
        async () =>
          (await db().node.findFirstOrThrow({ where: { name } })).lastHeartbeatAt!.getTime(),
        {
          timeout: 15_000,
        },
      )
      .toBeGreaterThan(Date.now() - 8_000);

    const token = await admin(["join-token", "--node", name]);
    expect(token.code, token.stderr).toBe(0);
    expect(token.stdout).toMatch(/^thawjoin_[0-9a-f]{12}_\S+\n$/);
    const bound = await db().joinToken.findFirstOrThrow({ orderBy: { createdAt: "desc" } });
    expect(bound.nodeId).toBe(before.id);

    const drained = await admin(["drain", "--node", name, "--reason", "maintenance"]);
    expect(drained.code, drained.stderr).toBe(0);
    expect(await db().node.findFirstOrThrow({ where: { name } })).toMatchObject({
      state: "draining",
      stateReason: "maintenance",
    });
    const revoked = await admin(["revoke", "--node", before.id]);
    expect(revoked.code, revoked.stderr).toBe(0);
    const gone = await db().node.findFirstOrThrow({ where: { name } });
    expect(gone.credentialRevokedAt).not.toBeNull();
    expect(gone.credentialHash).toBeNull();
    const actions = (
      await db().auditLog.findMany({
        where: { targetId: before.id },
        orderBy: { createdAt: "asc" },
      })
    ).map((a) => a.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        "node.credential_rotation_requested",
        "node.credential_rotated",
        "node.drained",
        "node.revoked",
      ]),
    );
    const unknown = await admin(["rotate", "--node", "no-such-node"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No node no-such-node in this org\. \(field: node\)/);
  });
});
