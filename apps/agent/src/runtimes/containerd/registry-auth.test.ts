import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  credentialFor,
  dockerConfigWithAuth,
  hostsToml,
  parseChallenge,
  pullAuthorization,
  repositoryOf,
  withPullHostsDir,
  writeDockerConfigAuth,
} from "./registry-auth.ts";
import { redactor, runTool, ToolError } from "./run-tool.ts";

const auth = { registry: "registry.example.com:5000", username: "thaw", password: 's3cr:et"pw' };
const basic = Buffer.from('thaw:s3cr:et"pw').toString("base64");

describe("registry credentials for a pull", () => {
  it("finds the credential of a reference's registry, Docker Hub under any of its names", () => {
    const hub = { registry: "docker.io", username: "u", password: "p" };
    expect(credentialFor("registry.example.com:5000/team/m:v1", [hub, auth])).toBe(auth);
    expect(credentialFor("Registry.Example.com:5000/team/m@sha256:" + "a".repeat(64), [auth])).toBe(
      auth,
    );
    expect(credentialFor("busybox:1", [hub])).toBe(hub);
    expect(credentialFor("index.docker.io/library/busybox:1", [hub])).toBe(hub);
    expect(credentialFor("ghcr.io/team/m:v1", [hub, auth])).toBeUndefined();
    expect(credentialFor("ghcr.io/team/m:v1", undefined)).toBeUndefined();
  });

  it("names the repository as a token scope does", () => {
    expect(repositoryOf("registry.example.com:5000/team/model:v1")).toBe("team/model");
    expect(repositoryOf(`localhost:5000/m@sha256:${"b".repeat(64)}`)).toBe("m");
    expect(repositoryOf("busybox:1.36")).toBe("library/busybox");
    expect(repositoryOf("docker.io/busybox")).toBe("library/busybox");
    expect(repositoryOf("thaw/llama:v1")).toBe("thaw/llama");
  });

  it("parses registry challenges", () => {
    expect(
      parseChallenge('Bearer realm="https://auth.docker.io/token",service="registry.docker.io"'),
    ).toEqual({
      scheme: "bearer",
      params: { realm: "https://auth.docker.io/token", service: "registry.docker.io" },
    });
    expect(parseChallenge('Basic realm="thaw-test"')).toEqual({
      scheme: "basic",
      params: { realm: "thaw-test" },
    });
    expect(parseChallenge(null)).toBeUndefined();
  });

  const fakeFetch =
    (
      answers: (url: URL, init?: RequestInit) => Response,
      seen: { url: URL; init?: RequestInit }[],
    ) =>
    (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(input instanceof Request ? input.url : input);
      seen.push({ url, ...(init ? { init } : {}) });
      return Promise.resolve(answers(url, init));
    };

  it("sends the credential as Basic to a registry that asks for Basic (htpasswd, ECR)", async () => {
    const seen: { url: URL }[] = [];
    const result = await pullAuthorization({
      credential: auth,
      repository: "team/model",
      plainHttp: true,
      fetch: fakeFetch(
        () => new Response("", { status: 401, headers: { "www-authenticate": 'Basic realm="r"' } }),
        seen,
      ),
    });
    expect(seen.map((s) => s.url.href)).toEqual(["http://registry.example.com:5000/v2/"]);
    expect(result.header).toBe(`Basic ${basic}`);
    expect(result.secrets).toEqual(expect.arrayContaining([auth.password, basic]));
  });

  it("trades the credential for a pull token where the registry asks for Bearer", async () => {
    const seen: { url: URL; init?: RequestInit }[] = [];
    const result = await pullAuthorization({
      credential: { registry: "docker.io", username: "me", password: "pat" },
      repository: "library/busybox",
      plainHttp: false,
      fetch: fakeFetch(
        (url) =>
          url.pathname === "/v2/"
            ? new Response("", {
                status: 401,
                headers: {
                  "www-authenticate":
                    'Bearer realm="https://auth.docker.io/token",service="registry.docker.io"',
                },
              })
            : Response.json({ token: "tok-123", expires_in: 300 }),
        seen,
      ),
    });
    expect(seen[0]?.url.href).toBe("https://registry-1.docker.io/v2/");
    expect(seen[1]?.url.origin + seen[1]!.url.pathname).toBe("https://auth.docker.io/token");
    expect(Object.fromEntries(seen[1]!.url.searchParams)).toEqual({
      service: "registry.docker.io",
      scope: "repository:library/busybox:pull",
    });
    expect(seen[1]?.init?.headers).toEqual({
      authorization: `Basic ${Buffer.from("me:pat").toString("base64")}`,
    });
    expect(result.header).toBe("Bearer tok-123");
    expect(result.secrets).toContain("tok-123");
  });

  it("refuses to send the credential to a plain-HTTP token realm, and says when it is refused", async () => {
    const challenge = (realm: string) => () =>
      new Response("", {
        status: 401,
        headers: { "www-authenticate": `Bearer realm="${realm}",service="s"` },
      });
    await expect(
      pullAuthorization({
        credential: auth,
        repository: "team/model",
        plainHttp: false,
        fetch: fakeFetch(challenge("http://auth.example.com/token"), []),
      }),
    ).rejects.toThrow(/refusing to send the credential/);
    const refused = pullAuthorization({
      credential: auth,
      repository: "team/model",
      plainHttp: false,
      fetch: fakeFetch(
        (url) =>
          url.pathname === "/v2/"
            ? challenge("https://auth.example.com/token")()
            : new Response("", { status: 401 }),
        [],
      ),
    });
    await expect(refused).rejects.toThrow(/refused the credential given for it .*401/);
    await expect(refused).rejects.not.toThrow(auth.password);
  });

  it("writes a hosts.toml that carries the header for the registry's API host only", () => {
    expect(
      hostsToml({ registry: "127.0.0.1:5000", plainHttp: true, authorization: `Basic ${basic}` }),
    ).toBe(
      [
        "# Written by the thaw agent for one pull and removed after it.",
        'server = "http://127.0.0.1:5000"',
        "",
        '[host."http://127.0.0.1:5000"]',
        '  capabilities = ["pull", "resolve"]',
        '  [host."http://127.0.0.1:5000".header]',
        `    Authorization = "Basic ${basic}"`,
        "",
      ].join("\n"),
    );
    expect(
      hostsToml({ registry: "docker.io", plainHttp: false, authorization: 'Bearer a"b\\c' }),
    ).toContain(
      '[host."https://registry-1.docker.io".header]\n    Authorization = "Bearer a\\"b\\\\c"',
    );
  });

  describe("files", () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), "thaw-auth-test-"));
    });
    afterEach(async () => rm(dir, { recursive: true, force: true }));

    it("keeps the hosts directory private while the pull runs and removes it after, failed or not", async () => {
      const o = { registry: "127.0.0.1:5000", plainHttp: true, authorization: "Basic x" };
      let seen = "";
      await withPullHostsDir(dir, o, async (hostsDir) => {
        seen = hostsDir;
        expect((await stat(hostsDir)).mode & 0o777).toBe(0o700);
        const file = path.join(hostsDir, "127.0.0.1:5000", "hosts.toml");
        expect((await stat(file)).mode & 0o777).toBe(0o600);
        expect(await readFile(file, "utf8")).toContain('Authorization = "Basic x"');
      });
      expect(seen.startsWith(dir)).toBe(true);
      await expect(
        withPullHostsDir(dir, o, () => Promise.reject(new Error("pull failed"))),
      ).rejects.toThrow("pull failed");
      expect(await readdir(dir)).toEqual([]);
    });

    it("sets the registry's entry in the snapshotter's docker config, keeping the rest (untested against stargz-snapshotter)", async () => {
      const file = path.join(dir, "docker", "config.json");
      await writeDockerConfigAuth(file, auth);
      await writeDockerConfigAuth(file, { registry: "docker.io", username: "me", password: "pat" });
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect(JSON.parse(await readFile(file, "utf8"))).toEqual({
        auths: {
          "registry.example.com:5000": { auth: basic },
          "https://index.docker.io/v1/": { auth: Buffer.from("me:pat").toString("base64") },
        },
      });
      await writeDockerConfigAuth(file, { ...auth, password: "new" });
      const after = JSON.parse(await readFile(file, "utf8")) as { auths: Record<string, unknown> };
      expect(after.auths["registry.example.com:5000"]).toEqual({
        auth: Buffer.from("thaw:new").toString("base64"),
      });
      expect(await readdir(path.dirname(file))).toEqual(["config.json"]);

      await writeFile(file, "not json: hunter2");
      await expect(writeDockerConfigAuth(file, auth)).rejects.toThrow(/not a docker config/);
      await expect(writeDockerConfigAuth(file, auth)).rejects.not.toThrow(/hunter2/);
    });

    it("keeps other keys of an existing docker config", () => {
      const merged = JSON.parse(
        dockerConfigWithAuth(
          JSON.stringify({ credsStore: "x", auths: { a: { auth: "b" } } }),
          auth,
        ),
      ) as unknown;
      expect(merged).toEqual({
        credsStore: "x",
        auths: { a: { auth: "b" }, "registry.example.com:5000": { auth: basic } },
      });
    });
  });
});

describe("tool failures never carry a secret", () => {
  it("redacts secrets from the message, the command and stderr", async () => {
    const error: unknown = await runTool(
      {
        file: "sh",
        args: ["-c", 'echo "denied for hunter2 (aHVudGVyMg==)" >&2; exit 3', "hunter2"],
      },
      { what: "pull", timeoutMs: 5_000, secrets: ["hunter2", "aHVudGVyMg=="] },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!(error instanceof ToolError)) throw new Error("expected a ToolError");
    expect(error.message).toContain("exited with code 3");
    expect(error.message).toContain("[redacted]");
    expect(error.message).not.toMatch(/hunter2|aHVudGVyMg==/);
    expect(error.details.stderr).not.toContain("hunter2");
    expect(error.command.args.join(" ")).not.toContain("hunter2");
  });

  it("redacts the longer secret first", () => {
    expect(redactor(["ab", "abcd"])("xabcdx ab")).toBe("x[redacted]x [redacted]");
  });
});
