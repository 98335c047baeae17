import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { type RegistryAuth } from "@thaw/protocol";
import { z } from "zod";
import { registryHost } from "./image-blobs.ts";

// Private images (issue 19): the credential a start carries reaches ctr without ever being on a
// command line. ctr 1.6's `--user user:password` puts the password in /proc/<pid>/cmdline, which
// every user of the host can read; `--user user` alone prompts on a terminal (without one, ctr
// panics); ctr ignores DOCKER_CONFIG. What works, verified against docker-registry with htpasswd
// auth: a hosts directory made for the one pull (`--hosts-dir`, containerd's hosts.toml) whose
// host entry carries the Authorization header. containerd sends it with every request to that
// host, and Go's HTTP client drops it on a redirect to another host (the blob store a registry
// redirects to). The header is what the registry's challenge asks for: Basic (htpasswd, ECR)
// as is, Bearer (Docker Hub, GHCR, Harbor...) after the token exchange done here. The directory
// is 0700, the file 0600, both removed when the pull ends.

/** The registry name a credential is stored under: docker.io for Docker Hub's aliases. */
export function canonicalRegistry(host: string): string {
  const h = host.toLowerCase();
  return h === "index.docker.io" || h === "registry-1.docker.io" ? "docker.io" : h;
}

/** The credential the start carries for `ref`'s registry, if any. */
export function credentialFor(
  ref: string,
  auths: readonly RegistryAuth[] | undefined,
): RegistryAuth | undefined {
  const wanted = canonicalRegistry(registryHost(ref));
  return auths?.find((a) => canonicalRegistry(a.registry) === wanted);
}

/** The host containerd talks to for a registry name (Docker Hub's API is not at docker.io). */
export function registryApiHost(registry: string): string {
  return canonicalRegistry(registry) === "docker.io" ? "registry-1.docker.io" : registry;
}

/** The repository of a reference, as a token scope names it: `team/model`, `library/busybox`. */
export function repositoryOf(ref: string): string {
  const withoutDigest = ref.split("@")[0] ?? ref;
  const host = registryHost(withoutDigest);
  const first = withoutDigest.split("/")[0] ?? "";
  const rest =
    first === host && withoutDigest.includes("/")
      ? withoutDigest.slice(first.length + 1)
      : withoutDigest;
  const slash = rest.lastIndexOf("/");
  const colon = rest.lastIndexOf(":");
  const repository = colon > slash ? rest.slice(0, colon) : rest;
  return host === "docker.io" && !repository.includes("/") ? `library/${repository}` : repository;
}

const basic = (auth: RegistryAuth) =>
  Buffer.from(`${auth.username}:${auth.password}`, "utf8").toString("base64");

/** Every form of the secret that could show up somewhere: what error messages must not contain. */
export function secretsOf(auth: RegistryAuth): string[] {
  return [auth.password, basic(auth)];
}

/** `Bearer realm="…",service="…"` → its scheme and parameters. */
export function parseChallenge(
  header: string | null,
): { scheme: string; params: Record<string, string> } | undefined {
  const match = header?.trim().match(/^(\S+)\s*(.*)$/);
  if (!match) return undefined;
  const params: Record<string, string> = {};
  for (const [, key, quoted, bare] of (match[2] ?? "").matchAll(
    /([A-Za-z][\w-]*)=(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g,
  )) {
    if (key) params[key.toLowerCase()] = quoted?.replace(/\\(.)/g, "$1") ?? bare ?? "";
  }
  return { scheme: (match[1] ?? "").toLowerCase(), params };
}

const TokenAnswer = z.object({
  token: z.string().min(1).optional(),
  access_token: z.string().min(1).optional(),
});

export interface PullAuthorization {
  /** The Authorization header value for the registry's API host. */
  header: string;
  /** Strings to redact from anything reported about the pull. */
  secrets: string[];
}

/**
 * The Authorization header a pull of `repository` sends, from the registry's own challenge:
 * GET /v2/ → 401 `Basic` (docker-registry htpasswd, ECR): the credential as Basic; `Bearer`:
 * a pull token for the repository from the realm, fetched with the credential as Basic (the
 * distribution token protocol). Anything else (no challenge, a network error): Basic, and ctr
 * reports what the registry says.
 */
export async function pullAuthorization(o: {
  credential: RegistryAuth;
  repository: string;
  plainHttp: boolean;
  signal?: AbortSignal;
  fetch?: typeof fetch;
}): Promise<PullAuthorization> {
  const doFetch = o.fetch ?? fetch;
  const basicHeader = `Basic ${basic(o.credential)}`;
  const secrets = secretsOf(o.credential);
  const scheme = o.plainHttp ? "http" : "https";
  const timeout = () =>
    o.signal
      ? AbortSignal.any([o.signal, AbortSignal.timeout(30_000)])
      : AbortSignal.timeout(30_000);
  let challenge: ReturnType<typeof parseChallenge>;
  try {
    const ping = await doFetch(`${scheme}://${registryApiHost(o.credential.registry)}/v2/`, {
      signal: timeout(),
      redirect: "manual",
    });
    await ping.body?.cancel();
    challenge =
      ping.status === 401 ? parseChallenge(ping.headers.get("www-authenticate")) : undefined;
  } catch {
    challenge = undefined;
  }
  if (challenge?.scheme !== "bearer" || !challenge.params.realm) {
    return { header: basicHeader, secrets };
  }
  const realm = new URL(challenge.params.realm);
  // The credential goes to the realm the registry names, as docker and containerd do; never
  // over plain HTTP unless the registry itself is one the operator listed as plain HTTP.
  if (realm.protocol !== "https:" && !(o.plainHttp && realm.protocol === "http:")) {
    throw new Error(
      `registry ${o.credential.registry} sends its token realm over ${realm.protocol}; refusing to send the credential there`,
    );
  }
  if (challenge.params.service) realm.searchParams.set("service", challenge.params.service);
  realm.searchParams.set("scope", `repository:${o.repository}:pull`);
  const answer = await doFetch(realm, {
    headers: { authorization: basicHeader },
    signal: timeout(),
  });
  if (!answer.ok) {
    await answer.body?.cancel();
    throw new Error(
      `registry ${o.credential.registry} refused the credential given for it (token realm ${realm.host} answered ${answer.status}): check the org's registry credential`,
    );
  }
  const parsed = TokenAnswer.safeParse(await answer.json().catch(() => undefined));
  const token = parsed.success ? (parsed.data.token ?? parsed.data.access_token) : undefined;
  if (!token) throw new Error(`token realm ${realm.host} answered without a token`);
  return { header: `Bearer ${token}`, secrets: [...secrets, token] };
}

/** containerd's hosts.toml for one registry: its API host, for pull and resolve, with the header. */
export function hostsToml(o: {
  registry: string;
  plainHttp: boolean;
  authorization: string;
}): string {
  const server = `${o.plainHttp ? "http" : "https"}://${registryApiHost(o.registry)}`;
  // JSON strings are TOML basic strings (same escapes); the schema already refused control characters.
  const s = JSON.stringify;
  return [
    "# Written by the thaw agent for one pull and removed after it.",
    `server = ${s(server)}`,
    "",
    `[host.${s(server)}]`,
    '  capabilities = ["pull", "resolve"]',
    `  [host.${s(server)}.header]`,
    `    Authorization = ${s(o.authorization)}`,
    "",
  ].join("\n");
}

export const PULL_HOSTS_PREFIX = "thaw-pull-auth-";

/**
 * Runs `use` with a hosts directory (for `--hosts-dir`) that authorizes pulls from `registry`,
 * in a fresh 0700 directory under `parent`, removed afterwards whatever happens. (A killed agent's
 * leftovers go with its PrivateTmp, which systemd removes when the service stops.)
 */
export async function withPullHostsDir<T>(
  parent: string,
  o: { registry: string; plainHttp: boolean; authorization: string },
  use: (hostsDir: string) => Promise<T>,
): Promise<T> {
  await mkdir(parent, { recursive: true, mode: 0o700 });
  const dir = await mkdtemp(path.join(parent, PULL_HOSTS_PREFIX));
  try {
    // ctr looks the registry up by the name in the reference (docker.io, host:port).
    const hostDir = path.join(dir, o.registry);
    await mkdir(hostDir, { mode: 0o700 });
    await writeFile(path.join(hostDir, "hosts.toml"), hostsToml(o), { mode: 0o600, flag: "wx" });
    return await use(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// --- lazy path: stargz-snapshotter ----------------------------------------------------------
// containerd-stargz-grpc fetches layers itself, long after rpull returns (on-demand reads and
// the background fetch), with credentials from its docker config keychain: $DOCKER_CONFIG/
// config.json of the snapshotter's process. The agent writes the start's credential there
// (infra/agent sets DOCKER_CONFIG to a directory on tmpfs the agent may write), replacing the
// registry's previous entry; it stays while replicas may still read lazily and is gone at
// reboot. NOT tested against a real stargz-snapshotter (none on the CI machine): the file's
// format is docker's, which its dockerconfig keychain reads through docker/cli's config loader.

/** The key docker's config uses for a registry (Docker Hub's is its legacy index URL). */
export function dockerConfigKey(registry: string): string {
  return canonicalRegistry(registry) === "docker.io" ? "https://index.docker.io/v1/" : registry;
}

/** `existing` config.json text with `auth`'s registry entry set; other entries and keys kept. */
export function dockerConfigWithAuth(existing: string | undefined, auth: RegistryAuth): string {
  let config: Record<string, unknown> = {};
  if (existing?.trim()) {
    const parsed: unknown = JSON.parse(existing);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new Error("the docker config is not a JSON object");
    }
    config = parsed as Record<string, unknown>;
  }
  const auths =
    typeof config.auths === "object" && config.auths !== null && !Array.isArray(config.auths)
      ? (config.auths as Record<string, unknown>)
      : {};
  return (
    JSON.stringify(
      { ...config, auths: { ...auths, [dockerConfigKey(auth.registry)]: { auth: basic(auth) } } },
      null,
      2,
    ) + "\n"
  );
}

let dockerConfigWrites: Promise<unknown> = Promise.resolve();

/** Sets `auth`'s entry in the docker config at `file` (0600, atomic rename, one writer at a time). */
export function writeDockerConfigAuth(file: string, auth: RegistryAuth): Promise<void> {
  const write = async () => {
    await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const existing = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw error;
    });
    let text: string;
    try {
      text = dockerConfigWithAuth(existing, auth);
    } catch {
      throw new Error(`${file} is not a docker config (JSON object); not overwriting it`);
    }
    const temp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      await writeFile(temp, text, { mode: 0o600, flag: "wx" });
      await rename(temp, file);
    } finally {
      await rm(temp, { force: true });
    }
  };
  const result = dockerConfigWrites.then(write, write);
  dockerConfigWrites = result.catch(() => undefined);
  return result;
}
