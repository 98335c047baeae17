import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  copyFile,
  mkdir,
  mkdtemp,
  readFile,
  rm,
  rmdir,
  writeFile,
  chmod,
  open,
} from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { runTool } from "../run-tool.ts";

// A real containerd + registry + image on this machine, for integration tests and benchmarks:
// containerd with its own root/state/socket under a temp dir, Debian's docker-registry on a
// free loopback port, and a busybox-static image built with umoci and pushed with skopeo.
// Everything is torn down by stop(): tasks, daemons, mounts, temp dir.

/** Debian packages the real containerd tests need (CI installs them). */
export const CONTAINER_TEST_PACKAGES = [
  "containerd",
  "runc",
  "docker-registry",
  "umoci",
  "skopeo",
  "busybox-static",
] as const;

export interface ProbeImage {
  ref: string;
  digest: string;
  /** Sum of the manifest, config and layer blobs as the registry serves them. */
  bytes: number;
  layers: number;
  httpPort: number;
  readinessPath: string;
}

/** A registry that wants these credentials (htpasswd auth: docker-registry takes bcrypt only). */
export interface RegistryBasicAuth {
  username: string;
  password: string;
  bcryptHash: string;
}

/**
 * `thaw-probe-secret-3f9c`, bcrypt cost 4: generated once with bcryptjs, so the agent needs no
 * bcrypt dependency (no htpasswd tool on the test machines, Python's crypt has no bcrypt).
 */
export const TEST_REGISTRY_AUTH: RegistryBasicAuth = {
  username: "thaw",
  password: "thaw-probe-secret-3f9c",
  bcryptHash: "$2b$04$UoUyzKZWPEECfDAlPaOJGeM7OUvLeFDDsl1PgR54M.iIdcCgGU2ai",
};

export interface LocalStack {
  dir: string;
  address: string;
  namespace: string;
  registryHost: string;
  logDir: string;
  image: ProbeImage;
  /** Deletes every task and container of the namespace, stops the daemons, removes the dir. */
  stop(): Promise<void>;
}

const run = (file: string, args: string[], what: string, timeoutMs = 60_000) =>
  runTool({ file, args }, { what, timeoutMs });

/** Installs the packages that are missing (apt-get update once, then install). Root only. */
export async function ensureContainerTools(): Promise<string[]> {
  const missing: string[] = [];
  for (const pkg of CONTAINER_TEST_PACKAGES) {
    const status = await run("dpkg-query", ["-W", "-f=${Status}", pkg], `query ${pkg}`).then(
      (r) => r.stdout,
      () => "",
    );
    if (!status.includes("install ok installed")) missing.push(pkg);
  }
  if (missing.length > 0) {
    await run("apt-get", ["update", "-qq"], "update the apt package lists", 600_000);
    await runTool(
      { file: "apt-get", args: ["install", "-y", "-qq", "--no-install-recommends", ...missing] },
      {
        what: `install ${missing.join(" ")}`,
        timeoutMs: 900_000,
        env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
      },
    );
  }
  return missing;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
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

export async function startLocalStack(
  options: {
    imageName?: string;
    basicAuth?: RegistryBasicAuth;
    /** Extra layers on top of the probe's, each one file of this many random bytes. */
    payloadLayers?: readonly number[];
  } = {},
): Promise<LocalStack> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "thaw-ctd-"));
  const namespace = `thaw-it-${randomBytes(4).toString("hex")}`;
  const children: ChildProcess[] = [];
  let address = "";
  const stop = async () => {
    if (address) await removeEverything(address, namespace).catch(() => undefined);
    for (const child of children.reverse()) await stopChild(child);
    await unmountUnder(dir);
    await rm(dir, { recursive: true, force: true });
    // The runc shim keeps per-namespace state under /run/containerd/runc whatever the state dir.
    await rmdir(path.join("/run/containerd/runc", namespace)).catch(() => undefined);
  };
  try {
    const containerd = await startContainerd(dir);
    children.push(containerd.child);
    address = containerd.address;
    const registry = await startRegistry(dir, options.basicAuth);
    children.push(registry.child);
    const image = await buildAndPushProbeImage(
      dir,
      registry.host,
      options.imageName ?? "thaw/probe",
      options.basicAuth,
      options.payloadLayers ?? [],
    );
    const logDir = path.join(dir, "logs");
    await mkdir(logDir, { recursive: true });
    return { dir, address, namespace, registryHost: registry.host, logDir, image, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function startContainerd(dir: string): Promise<{ child: ChildProcess; address: string }> {
  const address = path.join(dir, "containerd.sock");
  const config = path.join(dir, "containerd.toml");
  await writeFile(
    config,
    [
      "version = 2",
      `root = ${JSON.stringify(path.join(dir, "root"))}`,
      `state = ${JSON.stringify(path.join(dir, "state"))}`,
      'disabled_plugins = ["io.containerd.grpc.v1.cri"]',
      "[grpc]",
      `  address = ${JSON.stringify(address)}`,
      '[plugins."io.containerd.internal.v1.opt"]',
      `  path = ${JSON.stringify(path.join(dir, "opt"))}`,
      "",
    ].join("\n"),
  );
  const child = await spawnLogged(
    "containerd",
    ["--config", config],
    path.join(dir, "containerd.log"),
  );
  await waitFor("containerd", child, path.join(dir, "containerd.log"), async () => {
    await run("ctr", ["-a", address, "version"], "ask containerd its version", 5_000);
  });
  return { child, address };
}

async function startRegistry(
  dir: string,
  basicAuth?: RegistryBasicAuth,
): Promise<{ child: ChildProcess; host: string }> {
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const config = path.join(dir, "registry.yml");
  await writeFile(
    config,
    [
      "version: 0.1",
      "log:",
      "  level: warn",
      "  accesslog:",
      "    disabled: true",
      "storage:",
      "  filesystem:",
      `    rootdirectory: ${path.join(dir, "registry")}`,
      "http:",
      `  addr: ${host}`,
      ...(basicAuth
        ? [
            "auth:",
            "  htpasswd:",
            "    realm: thaw-test",
            `    path: ${path.join(dir, "htpasswd")}`,
          ]
        : []),
      "",
    ].join("\n"),
  );
  if (basicAuth) {
    await writeFile(path.join(dir, "htpasswd"), `${basicAuth.username}:${basicAuth.bcryptHash}\n`);
  }
  const child = await spawnLogged(
    "docker-registry",
    ["serve", config],
    path.join(dir, "registry.log"),
  );
  await waitFor("docker-registry", child, path.join(dir, "registry.log"), async () => {
    const { status } = await httpGet(`http://${host}/v2/`, authHeader(basicAuth));
    if (status !== 200) throw new Error(`/v2/ answered ${status}`);
  });
  return { child, host };
}

/**
 * A one-layer OCI image: /bin/busybox (static) and /www/ready; its entrypoint is
 * `busybox httpd -f -p 127.0.0.1:<port> -h /www`, so GET /ready answers 200 once it runs.
 */
async function buildAndPushProbeImage(
  dir: string,
  registryHost: string,
  name: string,
  basicAuth: RegistryBasicAuth | undefined,
  payloadLayers: readonly number[],
): Promise<ProbeImage> {
  const httpPort = await freePort();
  const rootfs = path.join(dir, "image-rootfs");
  await mkdir(path.join(rootfs, "bin"), { recursive: true });
  await mkdir(path.join(rootfs, "www"), { recursive: true });
  await copyFile("/bin/busybox", path.join(rootfs, "bin", "busybox"));
  await chmod(path.join(rootfs, "bin", "busybox"), 0o755);
  await writeFile(path.join(rootfs, "www", "ready"), "ready\n");
  const layout = path.join(dir, "oci");
  const tag = "v1";
  const image = `${layout}:${tag}`;
  await run("umoci", ["init", "--layout", layout], "create the OCI layout");
  await run("umoci", ["new", "--image", image], "create the image");
  await run("umoci", ["insert", "--image", image, rootfs, "/"], "add the rootfs layer");
  // Incompressible payload (like model weights), one layer per entry.
  for (const [i, bytes] of payloadLayers.entries()) {
    const file = path.join(dir, `payload-${i}.bin`);
    const handle = await open(file, "w");
    for (let written = 0; written < bytes; written += 1 << 20) {
      await handle.write(randomBytes(Math.min(1 << 20, bytes - written)));
    }
    await handle.close();
    await run(
      "umoci",
      ["insert", "--image", image, file, `/payload/${i}.bin`],
      `add payload layer ${i}`,
      300_000,
    );
    await rm(file);
  }
  await run(
    "umoci",
    [
      "config",
      "--image",
      image,
      "--config.entrypoint",
      "/bin/busybox",
      ...["httpd", "-f", "-p", `127.0.0.1:${httpPort}`, "-h", "/www"].flatMap((a) => [
        "--config.cmd",
        a,
      ]),
    ],
    "set the entrypoint",
  );
  const ref = `${registryHost}/${name}:${tag}`;
  await run(
    "skopeo",
    [
      "copy",
      "--quiet",
      "--dest-tls-verify=false",
      ...(basicAuth ? ["--dest-creds", `${basicAuth.username}:${basicAuth.password}`] : []),
      `oci:${image}`,
      `docker://${ref}`,
    ],
    "push the image to the registry",
    120_000,
  );
  const manifest = await httpGet(`http://${registryHost}/v2/${name}/manifests/${tag}`, {
    ...authHeader(basicAuth),
    accept:
      "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json",
  });
  const digest = manifest.headers["docker-content-digest"];
  if (manifest.status !== 200 || typeof digest !== "string") {
    throw new Error(`registry did not serve the pushed manifest (${manifest.status})`);
  }
  const body = JSON.parse(manifest.body.toString("utf8")) as {
    config: { size: number };
    layers: { size: number }[];
  };
  const bytes =
    manifest.body.length + body.config.size + body.layers.reduce((s, l) => s + l.size, 0);
  return { ref, digest, bytes, layers: body.layers.length, httpPort, readinessPath: "/ready" };
}

function authHeader(basicAuth: RegistryBasicAuth | undefined): Record<string, string> {
  if (!basicAuth) return {};
  const token = Buffer.from(`${basicAuth.username}:${basicAuth.password}`).toString("base64");
  return { authorization: `Basic ${token}` };
}

/** Kills and deletes every task and container of the namespace (test teardown only). */
async function removeEverything(address: string, namespace: string): Promise<void> {
  const ctr = (...args: string[]) =>
    run("ctr", ["-a", address, "-n", namespace, ...args], `ctr ${args.join(" ")}`);
  const tasks = (await ctr("tasks", "ls", "-q")).stdout
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  for (const id of tasks) {
    await ctr("tasks", "kill", "-s", "SIGKILL", id).catch(() => undefined);
    for (let i = 0; i < 50; i++) {
      if (
        await ctr("tasks", "delete", id).then(
          () => true,
          () => false,
        )
      )
        break;
      await sleep(100);
    }
  }
  const containers = (await ctr("containers", "ls", "-q")).stdout
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  for (const id of containers) await ctr("containers", "delete", id).catch(() => undefined);
}

async function unmountUnder(dir: string): Promise<void> {
  const mounts = await mountPointsUnder(dir);
  for (const mountPoint of mounts.sort((a, b) => b.length - a.length)) {
    await run("umount", ["-l", mountPoint], `unmount ${mountPoint}`).catch(() => undefined);
  }
}

/** Mount points at or below a directory, from /proc/self/mountinfo. */
export async function mountPointsUnder(dir: string): Promise<string[]> {
  const info = await readFile("/proc/self/mountinfo", "utf8");
  return info
    .split("\n")
    .map((line) => line.split(" ")[4] ?? "")
    .map((p) => p.replace(/\\040/g, " "))
    .filter((p) => p === dir || p.startsWith(dir + "/"));
}

async function spawnLogged(file: string, args: string[], logPath: string): Promise<ChildProcess> {
  const log = await open(logPath, "a");
  const child = spawn(file, args, { stdio: ["ignore", log.fd, log.fd] });
  // The child holds its own copy of the descriptor.
  child.once("spawn", () => void log.close());
  child.once("error", () => void log.close());
  return child;
}

async function waitFor(
  name: string,
  child: ChildProcess,
  logPath: string,
  ready: () => Promise<void>,
): Promise<void> {
  const deadline = performance.now() + 20_000;
  let last: unknown;
  while (performance.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    try {
      await ready();
      return;
    } catch (error) {
      last = error;
      await sleep(50);
    }
  }
  const log = await readFile(logPath, "utf8").catch(() => "");
  throw new Error(
    `${name} did not become ready (${child.exitCode !== null ? `exited ${child.exitCode}` : String(last)}); log tail:\n${log.split("\n").slice(-15).join("\n")}`,
  );
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

export function httpGet(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers, agent: false, timeout: 5_000 }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (c: Buffer) => chunks.push(c));
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks),
        }),
      );
      response.on("error", reject);
    });
    request.on("timeout", () => request.destroy(new Error(`GET ${url} timed out`)));
    request.on("error", reject);
  });
}
