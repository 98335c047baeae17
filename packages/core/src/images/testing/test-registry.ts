import { execFile, spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";

// A real registry for tests of the registry inspection: Debian's docker-registry (the CNCF
// distribution registry) on a free loopback port, optionally behind htpasswd basic auth, and
// a way to push blobs and manifests to it as a build tool would. Images are built with umoci
// (its layers are gzip); tests assemble indexes and variants from those blobs.

const run = promisify(execFile);

export interface TestRegistry {
  host: string;
  dir: string;
  /** Pushes a blob; answers its descriptor fields. */
  pushBlob(repository: string, bytes: Buffer): Promise<{ digest: string; size: number }>;
  /** PUTs a manifest or index under a tag (or its digest); answers its digest. */
  pushManifest(repository: string, tag: string, mediaType: string, body: unknown): Promise<string>;
  stop(): Promise<void>;
}

export interface UmociImage {
  config: Buffer;
  layers: Buffer[];
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export function sha256Digest(bytes: Buffer): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** A registry; with `basicAuth`, every request needs those credentials (htpasswd, bcrypt). */
export async function startTestRegistry(
  options: {
    basicAuth?: { username: string; password: string; bcryptHash: string };
    /** Docker's token auth: the registry trusts tokens `issuer` signs with `certPem`'s key. */
    tokenAuth?: {
      realm: string;
      service: string;
      issuer: string;
      certPem: string;
      /** The bearer token the test's pushes to a repository use. */
      pushToken: (repository: string) => string;
    };
  } = {},
): Promise<TestRegistry> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "thaw-registry-"));
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const lines = [
    "version: 0.1",
    "log:",
    "  level: warn",
    "  accesslog:",
    "    disabled: true",
    "storage:",
    "  filesystem:",
    `    rootdirectory: ${path.join(dir, "data")}`,
    "http:",
    `  addr: ${host}`,
  ];
  if (options.basicAuth) {
    const file = path.join(dir, "htpasswd");
    await writeFile(file, `${options.basicAuth.username}:${options.basicAuth.bcryptHash}\n`);
    lines.push("auth:", "  htpasswd:", "    realm: thaw-test", `    path: ${file}`);
  }
  if (options.tokenAuth) {
    const bundle = path.join(dir, "token-root.pem");
    await writeFile(bundle, options.tokenAuth.certPem);
    lines.push(
      "auth:",
      "  token:",
      `    realm: ${options.tokenAuth.realm}`,
      `    service: ${options.tokenAuth.service}`,
      `    issuer: ${options.tokenAuth.issuer}`,
      `    rootcertbundle: ${bundle}`,
    );
  }
  await writeFile(path.join(dir, "config.yml"), lines.join("\n") + "\n");
  const child: ChildProcess = spawn("docker-registry", ["serve", path.join(dir, "config.yml")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4_000)));
  const deadline = Date.now() + 20_000;
  for (;;) {
    const ok = await fetch(`http://${host}/v2/`).then(
      (r) => r.status === 200 || r.status === 401,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`docker-registry did not start: ${stderr}`);
    await sleep(50);
  }
  const basic = options.basicAuth
    ? `Basic ${Buffer.from(`${options.basicAuth.username}:${options.basicAuth.password}`).toString("base64")}`
    : null;
  const authFor = (repository: string): Record<string, string> => {
    if (options.tokenAuth)
      return { authorization: `Bearer ${options.tokenAuth.pushToken(repository)}` };
    return basic ? { authorization: basic } : {};
  };
  const registry: TestRegistry = {
    host,
    dir,
    async pushBlob(repository, bytes) {
      const digest = sha256Digest(bytes);
      const auth = authFor(repository);
      const start = await fetch(`http://${host}/v2/${repository}/blobs/uploads/`, {
        method: "POST",
        headers: auth,
      });
      if (start.status !== 202) throw new Error(`blob upload start: ${start.status}`);
      const location = new URL(start.headers.get("location")!, `http://${host}`);
      location.searchParams.set("digest", digest);
      const put = await fetch(location, {
        method: "PUT",
        headers: { ...auth, "content-type": "application/octet-stream" },
        body: new Uint8Array(bytes),
      });
      if (put.status !== 201) throw new Error(`blob upload: ${put.status} ${await put.text()}`);
      return { digest, size: bytes.length };
    },
    async pushManifest(repository, tag, mediaType, body) {
      const bytes = Buffer.from(JSON.stringify(body));
      const put = await fetch(`http://${host}/v2/${repository}/manifests/${tag}`, {
        method: "PUT",
        headers: { ...authFor(repository), "content-type": mediaType },
        body: new Uint8Array(bytes),
      });
      if (put.status !== 201) throw new Error(`manifest put: ${put.status} ${await put.text()}`);
      return sha256Digest(bytes);
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  return registry;
}

/**
 * A one- or two-layer image built by umoci from directories of files (one gzip layer per
 * directory), answered as its config and layer blobs.
 */
export async function buildUmociImage(
  layers: Record<string, Buffer | string>[],
  config: { architecture?: string } = {},
): Promise<UmociImage> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "thaw-umoci-"));
  try {
    const layout = path.join(dir, "oci");
    const image = `${layout}:t`;
    const rootless = process.getuid?.() === 0 ? [] : ["--rootless"];
    await run("umoci", ["init", "--layout", layout]);
    await run("umoci", ["new", "--image", image]);
    for (const [i, files] of layers.entries()) {
      const root = path.join(dir, `layer-${i}`);
      for (const [name, content] of Object.entries(files)) {
        const file = path.join(root, name);
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, content);
      }
      await run("umoci", ["insert", ...rootless, "--image", image, root, "/"]);
    }
    if (config.architecture)
      await run("umoci", ["config", "--image", image, "--architecture", config.architecture]);
    const blob = (digest: string) =>
      readFile(path.join(layout, "blobs", "sha256", digest.slice("sha256:".length)));
    const index = JSON.parse(await readFile(path.join(layout, "index.json"), "utf8")) as {
      manifests: { digest: string }[];
    };
    const manifest = JSON.parse((await blob(index.manifests[0]!.digest)).toString()) as {
      config: { digest: string };
      layers: { digest: string }[];
    };
    return {
      config: await blob(manifest.config.digest),
      layers: await Promise.all(manifest.layers.map((l) => blob(l.digest))),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A one-layer gzip image (its layer: `text` repeated), pushed as OCI; answers its reference. */
export async function pushTinyImage(
  registry: TestRegistry,
  repository: string,
  tag: string,
  text = "tiny image layer\n",
): Promise<string> {
  const { gzipSync } = await import("node:zlib");
  const config = await registry.pushBlob(repository, Buffer.from("{}"));
  const layer = await registry.pushBlob(repository, gzipSync(Buffer.from(text.repeat(1_000))));
  await registry.pushManifest(repository, tag, "application/vnd.oci.image.manifest.v1+json", {
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: { mediaType: "application/vnd.oci.image.config.v1+json", ...config },
    layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", ...layer }],
  });
  return `${registry.host}/${repository}:${tag}`;
}

export interface TokenServer {
  realm: string;
  service: string;
  issuer: string;
  certPem: string;
  /** A token for these actions on a repository, as the server would issue it. */
  mint(repository: string, actions: string[]): string;
  /** Each token request: its scope and whether it carried credentials. */
  requests: { scope: string; basic: boolean }[];
  stop(): Promise<void>;
}

/**
 * Docker's token auth server, as Docker Hub and GHCR run one: `GET /token?service&scope`,
 * answered with an RS256 JWT (x5c header: a self-signed certificate made with openssl) that
 * grants pull on `publicRepositories` to anyone and on any repository to `users`; a wrong
 * password is a 401, no credentials for a private repository a token granting nothing.
 */
export async function startTokenServer(options: {
  publicRepositories: string[];
  users: Record<string, string>;
}): Promise<TokenServer> {
  const { createSign, randomUUID, X509Certificate } = await import("node:crypto");
  const http = await import("node:http");
  const dir = await mkdtemp(path.join(os.tmpdir(), "thaw-token-"));
  const keyFile = path.join(dir, "key.pem");
  const certFile = path.join(dir, "cert.pem");
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    keyFile,
    "-out",
    certFile,
    "-days",
    "1",
    "-subj",
    "/CN=thaw-test-token-issuer",
  ]);
  const keyPem = await readFile(keyFile, "utf8");
  const certPem = await readFile(certFile, "utf8");
  await rm(dir, { recursive: true, force: true });
  const certDer = new X509Certificate(certPem).raw.toString("base64");
  const issuer = "thaw-test-issuer";
  const service = "thaw-test-registry";
  const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const mint = (repository: string, actions: string[]) => {
    const now = Math.floor(Date.now() / 1000);
    const signingInput = `${b64url({ typ: "JWT", alg: "RS256", x5c: [certDer] })}.${b64url({
      iss: issuer,
      sub: "thaw-test",
      aud: service,
      exp: now + 300,
      nbf: now - 10,
      iat: now,
      jti: randomUUID(),
      access: actions.length > 0 ? [{ type: "repository", name: repository, actions }] : [],
    })}`;
    const signature = createSign("RSA-SHA256").update(signingInput).sign(keyPem, "base64url");
    return `${signingInput}.${signature}`;
  };
  const requests: TokenServer["requests"] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://token");
    const scope = url.searchParams.get("scope") ?? "";
    const repository = /^repository:([^:]+):/.exec(scope)?.[1] ?? "";
    const header = req.headers.authorization ?? "";
    requests.push({ scope, basic: header.startsWith("Basic ") });
    let user: string | null = null;
    if (header.startsWith("Basic ")) {
      const [name = "", password] = Buffer.from(header.slice(6), "base64").toString().split(":");
      if (options.users[name] !== password) {
        res.writeHead(401, { "content-type": "application/json" });
        return res.end(JSON.stringify({ details: "incorrect username or password" }));
      }
      user = name;
    }
    const granted = user !== null || options.publicRepositories.includes(repository);
    const token = mint(repository, granted ? ["pull"] : []);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ token, access_token: token, expires_in: 300 }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as net.AddressInfo;
  return {
    realm: `http://127.0.0.1:${port}/token`,
    service,
    issuer,
    certPem,
    mint,
    requests,
    stop: () => new Promise((r) => server.close(() => r()).closeAllConnections()),
  };
}
