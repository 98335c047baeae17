import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { isIpAddress, nonPublicHostReason } from "../deployments/source-policy.ts";

// The one way the control plane dials an address a client named (an image's registry, a
// model's https:// URL): the host is checked as text (source-policy.ts) and then every
// address it resolves to is checked at connect time, inside the socket's own DNS lookup, so a
// name that resolved to a public address when the deployment was written and to 10.0.0.5 or
// 169.254.169.254 now (DNS rebinding) is refused on the connection that would have used it.
// Redirects are followed by hand, each hop checked the same way, and credentials never follow
// a redirect to another host (registries send blob reads to a CDN or S3).

export type FetchRefusal =
  "non-public-address" | "timeout" | "too-large" | "network" | "too-many-redirects";

/** Why a request to a client-named address was not answered; the message says what happened. */
export class FetchRefusedError extends Error {
  readonly reason: FetchRefusal;
  constructor(reason: FetchRefusal, message: string) {
    super(message);
    this.name = "FetchRefusedError";
    this.reason = reason;
  }
}

export interface PublicFetchOptions {
  method?: "GET" | "HEAD" | "POST";
  headers?: Record<string, string>;
  /** A POST's body (a webhook's JSON). */
  body?: string | Buffer;
  /** Whole request, redirects included. */
  timeoutMs: number;
  /** A longer body is refused (not truncated): no answer is read without a bound. */
  maxBodyBytes: number;
  /**
   * `truncate`: keep the first maxBodyBytes of a longer body and answer (a webhook receiver's
   * answer is kept for the log, not used). Default `refuse`.
   */
  overflow?: "refuse" | "truncate";
  /** `manual`: a 3xx is the answer (a webhook is not re-sent elsewhere). Default `follow`. */
  redirect?: "follow" | "manual";
  /**
   * `host` or `host:port` the operator trusts although it is private (an internal registry,
   * configured in the server's env, never by a client). Plain http is allowed only to these.
   */
  trustedHosts?: ReadonlySet<string>;
  signal?: AbortSignal;
}

export interface PublicResponse {
  status: number;
  /** Lowercase names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /** The URL that answered, after redirects. */
  url: string;
}

const MAX_REDIRECTS = 5;
/** Headers that carry a credential and must not be sent to another host. */
const CREDENTIAL_HEADERS = ["authorization", "cookie"];

export async function fetchPublic(
  url: string,
  options: PublicFetchOptions,
): Promise<PublicResponse> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  let current = new URL(url);
  let headers = { ...(options.headers ?? {}) };
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const answer = await requestOnce(current, headers, options, signal).catch((error: unknown) => {
      if (deadline.aborted)
        throw new FetchRefusedError(
          "timeout",
          `${current.host} did not answer within ${options.timeoutMs / 1000} s`,
        );
      throw error;
    });
    const location = answer.headers.location;
    if (options.redirect === "manual") return { ...answer, url: current.toString() };
    if (answer.status < 300 || answer.status >= 400 || answer.status === 304 || !location)
      return { ...answer, url: current.toString() };
    const next = new URL(location, current);
    if (next.host !== current.host)
      headers = Object.fromEntries(
        Object.entries(headers).filter(([k]) => !CREDENTIAL_HEADERS.includes(k.toLowerCase())),
      );
    current = next;
  }
  throw new FetchRefusedError(
    "too-many-redirects",
    `${new URL(url).host} redirected more than ${MAX_REDIRECTS} times`,
  );
}

/** Whether a URL's host (with or without its port) is on the operator's trusted list. */
export function isTrustedHost(url: URL, trusted: ReadonlySet<string> | undefined): boolean {
  if (!trusted || trusted.size === 0) return false;
  return trusted.has(url.host.toLowerCase()) || trusted.has(url.hostname.toLowerCase());
}

function refuseUnlessAllowed(url: URL, trusted: ReadonlySet<string> | undefined): void {
  if (isTrustedHost(url, trusted)) return;
  if (url.protocol !== "https:")
    throw new FetchRefusedError(
      "non-public-address",
      `${url.host}: only https is used for hosts outside the operator's trusted list`,
    );
  const reason = nonPublicHostReason(url.hostname);
  if (reason) throw new FetchRefusedError("non-public-address", reason);
}

type AllAddressesLookup = (
  hostname: string,
  options: dns.LookupAllOptions,
  callback: (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

/**
 * A socket lookup that refuses every resolution including a non-public address (one is
 * enough: the connection may be made to any of them). `resolve` is dns.lookup; a test gives
 * its own to play a rebinding resolver.
 */
export function publicOnlyLookup(
  resolve: AllAddressesLookup = (hostname, options, callback) =>
    dns.lookup(hostname, options, callback),
): LookupFunction {
  return (hostname, options, callback) =>
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "", 4);
      const list = addresses;
      for (const { address } of list) {
        const reason = nonPublicHostReason(address);
        if (reason) {
          const refused = new FetchRefusedError(
            "non-public-address",
            `${hostname} resolves to ${address}: ${reason}`,
          );
          return callback(refused, "", 4);
        }
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(new Error(`${hostname} resolved to no address`), "", 4);
      callback(null, first.address, first.family);
    });
}

const checkedLookup = publicOnlyLookup();

function requestOnce(
  url: URL,
  headers: Record<string, string>,
  options: PublicFetchOptions,
  signal: AbortSignal,
): Promise<Omit<PublicResponse, "url">> {
  refuseUnlessAllowed(url, options.trustedHosts);
  const trusted = isTrustedHost(url, options.trustedHosts);
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(
      url,
      {
        method: options.method ?? "GET",
        headers: { "user-agent": "thaw-control-plane", ...headers },
        // An IP literal is never looked up: refuseUnlessAllowed has checked it as text.
        lookup: trusted || isIpAddress(url.hostname) ? undefined : checkedLookup,
        agent: false,
        signal,
      },
      (response) => {
        // A HEAD answer's Content-Length is the resource's, not a body's: there is none to bound.
        const declared = options.method === "HEAD" ? 0 : Number(response.headers["content-length"]);
        const truncate = options.overflow === "truncate";
        if (!truncate && Number.isFinite(declared) && declared > options.maxBodyBytes) {
          response.destroy();
          return reject(tooLarge(url, options.maxBodyBytes));
        }
        const chunks: Buffer[] = [];
        let length = 0;
        response.on("data", (chunk: Buffer) => {
          length += chunk.length;
          if (length > options.maxBodyBytes && truncate) {
            chunks.push(chunk.subarray(0, chunk.length - (length - options.maxBodyBytes)));
            response.destroy();
            resolve({
              status: response.statusCode ?? 0,
              headers: flattenHeaders(response.headers),
              body: Buffer.concat(chunks),
            });
            return;
          }
          if (length > options.maxBodyBytes) {
            response.destroy();
            reject(tooLarge(url, options.maxBodyBytes));
            return;
          }
          chunks.push(chunk);
        });
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: flattenHeaders(response.headers),
            body: Buffer.concat(chunks),
          }),
        );
        response.on("error", (error) => reject(asRefusal(url, error)));
      },
    );
    request.on("error", (error) => reject(asRefusal(url, error)));
    request.end(options.body);
  });
}

function tooLarge(url: URL, max: number): FetchRefusedError {
  return new FetchRefusedError("too-large", `${url.host} answered with more than ${max} bytes`);
}

function asRefusal(url: URL, error: unknown): Error {
  if (error instanceof FetchRefusedError) return error;
  const cause = (error as { cause?: unknown }).cause;
  if (cause instanceof FetchRefusedError) return cause;
  const code = (error as { code?: string }).code;
  return new FetchRefusedError(
    "network",
    `${url.host}: ${code ? `${code} ` : ""}${(error as Error).message ?? String(error)}`,
  );
}

function flattenHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}
