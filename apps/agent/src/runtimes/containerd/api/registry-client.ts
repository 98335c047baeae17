import { createHash } from "node:crypto";
import { type RegistryAuth } from "@thaw/protocol";
import {
  basicAuthorization,
  parseChallenge,
  registryApiHost,
  secretsOf,
} from "../registry-auth.ts";
import { type HttpAnswer, type HttpGet, nodeHttpGet } from "./http-get.ts";

// The registry side of the agent's own pull (api-pull.ts): the distribution API's GETs for
// manifests and blobs, with the token protocol a 401 asks for (Basic as is; Bearer: a pull token
// from the realm the registry names, with the start's credential if it carries one, anonymously
// otherwise). The credential lives in this process only: no file, no command line.

export const MANIFEST_MEDIA_TYPES = [
  "application/vnd.oci.image.index.v1+json",
  "application/vnd.docker.distribution.manifest.list.v2+json",
  "application/vnd.oci.image.manifest.v1+json",
  "application/vnd.docker.distribution.manifest.v2+json",
] as const;

/** A registry answer that is not what the pull needs, in words for the start's failure. */
export class RegistryError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
  ) {
    super(message);
    this.name = "RegistryError";
  }
}

export interface RegistryClientOptions {
  /** The registry's name as the reference gives it ("ghcr.io", "127.0.0.1:5000", "docker.io"). */
  registry: string;
  repository: string;
  plainHttp: boolean;
  credential?: RegistryAuth;
  signal?: AbortSignal;
  /** How requests are made (tests: a scripted registry); node:http(s) otherwise. */
  get?: HttpGet;
  /** Per request, until its headers arrive. */
  timeoutMs?: number;
}

type Challenge = NonNullable<ReturnType<typeof parseChallenge>>;

const MAX_REDIRECTS = 5;
const MAX_MANIFEST_BYTES = 4 * 1024 * 1024;

export class RegistryClient {
  private authorization: string | undefined;
  /** Strings to redact from anything reported: the credential's forms and the tokens got. */
  readonly secrets: string[];
  private readonly base: string;
  private readonly httpGet: HttpGet;

  constructor(private readonly o: RegistryClientOptions) {
    this.secrets = o.credential ? secretsOf(o.credential) : [];
    this.base = `${o.plainHttp ? "http" : "https"}://${registryApiHost(o.registry)}/v2/${o.repository}`;
    this.httpGet = o.get ?? nodeHttpGet;
  }

  /** A manifest or index by tag or digest, its bytes checked against the digest. */
  async manifest(
    reference: string,
  ): Promise<{ mediaType: string; digest: string; size: number; bytes: Buffer }> {
    const answer = await this.get(`${this.base}/manifests/${reference}`, {
      accept: MANIFEST_MEDIA_TYPES.join(", "),
    });
    const bytes = await answer.bytes(MAX_MANIFEST_BYTES).catch(() => {
      answer.discard();
      throw new RegistryError(
        `manifest ${reference} is larger than any image manifest (${MAX_MANIFEST_BYTES} bytes)`,
        undefined,
      );
    });
    const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
    if (reference.includes(":") && reference !== digest) {
      throw new RegistryError(`registry served ${digest} for ${reference}`, undefined);
    }
    const mediaType =
      answer.header("content-type")?.split(";")[0]?.trim() ||
      ((JSON.parse(bytes.toString("utf8")) as { mediaType?: string }).mediaType ?? "");
    return { mediaType, digest, size: bytes.length, bytes };
  }

  /** A blob's body, as the registry streams it (containerd checks its digest on commit). */
  async blob(digest: string): Promise<{ body: AsyncIterable<Uint8Array>; discard(): void }> {
    return this.get(`${this.base}/blobs/${digest}`, {});
  }

  private async get(
    url: string,
    headers: Record<string, string>,
    retried = false,
  ): Promise<HttpAnswer> {
    let target = new URL(url);
    const origin = target.origin;
    for (let hop = 0; ; hop++) {
      const sameOrigin = target.origin === origin;
      const deadline = this.headerDeadline();
      const answer = await this.httpGet(target, {
        headers: {
          ...headers,
          // The credential goes only to the registry itself, never to the blob store a
          // registry redirects to (S3, a CDN: their URLs carry their own signature).
          ...(sameOrigin && this.authorization ? { authorization: this.authorization } : {}),
        },
        signal: deadline.signal,
      }).finally(deadline.arrived);
      const location = answer.header("location");
      if (answer.status >= 300 && answer.status < 400 && location) {
        answer.discard();
        if (hop >= MAX_REDIRECTS)
          throw new RegistryError(`${url}: too many redirects`, answer.status);
        target = new URL(location, target);
        if (target.protocol !== "https:" && !(this.o.plainHttp && target.protocol === "http:")) {
          throw new RegistryError(
            `${url} redirects to ${target.protocol}; refusing it`,
            answer.status,
          );
        }
        continue;
      }
      if (answer.status === 401 && sameOrigin && !retried) {
        const challenge = parseChallenge(answer.header("www-authenticate") ?? null);
        if (this.canAnswer(challenge)) {
          answer.discard();
          await this.authorize(challenge);
          return this.get(url, headers, true);
        }
      }
      if (answer.status < 200 || answer.status > 299) throw await this.refusal(url, answer);
      return answer;
    }
  }

  /** Whether a challenge can be answered: Basic with a credential, Bearer with a realm. */
  private canAnswer(challenge: Challenge | undefined): challenge is Challenge {
    if (challenge?.scheme === "basic") return this.o.credential !== undefined;
    return challenge?.scheme === "bearer" && Boolean(challenge.params.realm);
  }

  /** Sets the Authorization header the challenge asks for (one canAnswer accepted). */
  private async authorize(challenge: Challenge): Promise<void> {
    const basic = this.o.credential ? basicAuthorization(this.o.credential) : undefined;
    if (challenge.scheme === "basic") {
      this.authorization = basic;
      return;
    }
    const realm = new URL(challenge.params.realm ?? "");
    if (realm.protocol !== "https:" && !(this.o.plainHttp && realm.protocol === "http:")) {
      throw new RegistryError(
        `registry ${this.o.registry} sends its token realm over ${realm.protocol}; refusing to send the credential there`,
        undefined,
      );
    }
    if (challenge.params.service) realm.searchParams.set("service", challenge.params.service);
    realm.searchParams.set("scope", `repository:${this.o.repository}:pull`);
    const answer = await this.httpGet(realm, {
      headers: basic ? { authorization: basic } : {},
      signal: this.o.signal
        ? AbortSignal.any([this.o.signal, AbortSignal.timeout(this.o.timeoutMs ?? 30_000)])
        : AbortSignal.timeout(this.o.timeoutMs ?? 30_000),
    });
    if (answer.status < 200 || answer.status > 299) {
      answer.discard();
      throw new RegistryError(
        `token realm ${realm.host} answered ${answer.status} ${answer.statusText}`,
        answer.status,
      );
    }
    const body = await answer
      .bytes(1 << 20)
      .then((b) => JSON.parse(b.toString("utf8")) as { token?: unknown; access_token?: unknown })
      .catch((): { token?: unknown; access_token?: unknown } => ({}));
    const token = typeof body.token === "string" ? body.token : body.access_token;
    if (typeof token !== "string" || !token) {
      throw new RegistryError(`token realm ${realm.host} answered without a token`, undefined);
    }
    this.secrets.push(token);
    this.authorization = `Bearer ${token}`;
  }

  private async refusal(url: string, answer: HttpAnswer): Promise<RegistryError> {
    const text = await answer
      .bytes(64 * 1024)
      .then((b) => b.toString("utf8"))
      .catch(() => "");
    let detail: string;
    try {
      const errors = (JSON.parse(text) as { errors?: { code?: string; message?: string }[] })
        .errors;
      detail = (errors ?? []).map((e) => [e.code, e.message].filter(Boolean).join(": ")).join("; ");
    } catch {
      detail = text.slice(0, 200);
    }
    const what = url.slice(this.base.length + 1);
    return new RegistryError(
      `${this.o.registry}/${this.o.repository} ${what}: ${answer.status} ${answer.statusText}${detail ? ` (${detail})` : ""}`,
      answer.status,
    );
  }

  /**
   * A request's signal: the pull's own, plus a deadline for the registry to start answering.
   * Once the headers are in (`arrived`), the body may take as long as the pull may: a layer of
   * tens of GB streams for minutes.
   */
  private headerDeadline(): { signal: AbortSignal; arrived: () => void } {
    const controller = new AbortController();
    const ms = this.o.timeoutMs ?? 30_000;
    const timer = setTimeout(
      () =>
        controller.abort(
          new RegistryError(
            `registry ${this.o.registry} did not answer within ${ms / 1000} s`,
            undefined,
          ),
        ),
      ms,
    );
    const signal = this.o.signal
      ? AbortSignal.any([this.o.signal, controller.signal])
      : controller.signal;
    return { signal, arrived: () => clearTimeout(timer) };
  }
}
