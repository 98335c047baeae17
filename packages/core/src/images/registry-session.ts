import type { PublicResponse } from "../net/public-fetch.ts";
import type { ImageReference } from "./image-reference.ts";

// One client's conversation with one registry repository over the OCI distribution API,
// with the two ways registries ask for credentials (docs.docker.com/registry/spec/auth):
// `WWW-Authenticate: Basic` (send the credentials) and `WWW-Authenticate: Bearer realm=…`
// (trade them — or nothing, for a public repository — for a token at the realm, scoped to
// pulling this repository). The token is kept for the session's later requests.

/** How the session reaches a URL: fetchPublic in production, bounded in time and size. */
export type RegistryHttp = (
  url: string,
  init: { method?: "GET" | "HEAD"; headers: Record<string, string>; maxBodyBytes: number },
) => Promise<PublicResponse>;

export interface RegistryCredentials {
  username: string;
  password: string;
}

/** A registry's answer that ends the inspection; `kind` decides the message. */
export class RegistryAnswerError extends Error {
  readonly kind: "unauthorized" | "not-found" | "bad-answer";
  readonly status: number;
  constructor(kind: RegistryAnswerError["kind"], status: number, message: string) {
    super(message);
    this.name = "RegistryAnswerError";
    this.kind = kind;
    this.status = status;
  }
}

interface Challenge {
  scheme: string;
  params: Record<string, string>;
}

/** `Bearer realm="…",service="…",scope="…"` → its scheme and parameters. */
export function parseChallenge(header: string): Challenge | null {
  const scheme = /^\s*([A-Za-z]+)\s*/.exec(header);
  if (!scheme?.[1]) return null;
  const params: Record<string, string> = {};
  for (const m of header.slice(scheme[0].length).matchAll(/([A-Za-z_]+)="([^"]*)"/g))
    params[m[1]!.toLowerCase()] = m[2]!;
  return { scheme: scheme[1].toLowerCase(), params };
}

const TOKEN_MAX_BYTES = 64 * 1024;

export class RegistrySession {
  private authorization: string | null = null;

  constructor(
    private readonly ref: ImageReference,
    private readonly baseUrl: string,
    private readonly http: RegistryHttp,
    private readonly credentials: RegistryCredentials | null,
  ) {}

  /** GET `/v2/<repository>/<path>`, answering the registry's challenge once if it makes one. */
  async get(
    path: string,
    headers: Record<string, string>,
    maxBodyBytes: number,
  ): Promise<PublicResponse> {
    const url = `${this.baseUrl}/v2/${this.ref.repository}/${path}`;
    const send = () =>
      this.http(url, {
        headers: this.authorization ? { ...headers, authorization: this.authorization } : headers,
        maxBodyBytes,
      });
    let answer = await send();
    if (answer.status === 401 && !this.authorization) {
      await this.answerChallenge(answer.headers["www-authenticate"] ?? "");
      answer = await send();
    }
    if (answer.status === 401 || answer.status === 403)
      throw new RegistryAnswerError(
        "unauthorized",
        answer.status,
        this.credentials
          ? `${this.ref.registry} refused the org's credentials for ${this.ref.repository} (${answer.status})`
          : `${this.ref.registry} wants credentials for ${this.ref.repository} (${answer.status}): add a registry credential for ${this.ref.registry} to the org`,
      );
    return answer;
  }

  private async answerChallenge(header: string): Promise<void> {
    const challenge = parseChallenge(header);
    const basic = this.credentials
      ? `Basic ${Buffer.from(`${this.credentials.username}:${this.credentials.password}`).toString("base64")}`
      : null;
    if (challenge?.scheme === "basic") {
      this.authorization = basic;
      return;
    }
    const realm = challenge?.scheme === "bearer" ? challenge.params.realm : undefined;
    if (!realm)
      throw new RegistryAnswerError(
        "bad-answer",
        401,
        `${this.ref.registry} answered 401 without a usable WWW-Authenticate challenge`,
      );
    const tokenUrl = new URL(realm);
    if (challenge?.params.service) tokenUrl.searchParams.set("service", challenge.params.service);
    tokenUrl.searchParams.set("scope", `repository:${this.ref.repository}:pull`);
    const answer = await this.http(tokenUrl.toString(), {
      headers: basic ? { authorization: basic } : {},
      maxBodyBytes: TOKEN_MAX_BYTES,
    });
    if (answer.status === 401 || answer.status === 403)
      throw new RegistryAnswerError(
        "unauthorized",
        answer.status,
        this.credentials
          ? `${tokenUrl.host} refused the org's credentials for ${this.ref.registry} (${answer.status})`
          : `${tokenUrl.host} gives no anonymous token for ${this.ref.repository} (${answer.status}): add a registry credential for ${this.ref.registry} to the org`,
      );
    let token: unknown;
    try {
      const body = JSON.parse(answer.body.toString("utf8")) as Record<string, unknown>;
      token = body.token ?? body.access_token;
    } catch {
      token = undefined;
    }
    if (answer.status !== 200 || typeof token !== "string" || token.length === 0)
      throw new RegistryAnswerError(
        "bad-answer",
        answer.status,
        `${tokenUrl.host} answered the token request with ${answer.status} and no token`,
      );
    this.authorization = `Bearer ${token}`;
  }
}
