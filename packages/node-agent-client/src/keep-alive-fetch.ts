import { createHash } from "node:crypto";
import http from "node:http";
import https from "node:https";
import type { Duplex } from "node:stream";
import tls from "node:tls";

// The subset of fetch this package's clients use (method, headers, string body, an abort
// signal; status and text back) on node:http with a keep-alive agent. undici's fetch spends
// most of its time building WHATWG streams and signals: a third of the agent's CPU in the
// sim-fleet benchmark's profile (~200 heartbeats and hundreds of telemetry batches a second
// from one process), and a tenth of a scheduler's in bench:placement's (a start request
// per cold start).
//
// A call may name the SHA-256 of the one certificate it accepts (`certSha256`, an agent's
// certificate pinned at join): it then goes over https only, on connections whose peer
// presented exactly that certificate, checked before a byte of the request is written (a
// self-signed certificate has no CA to check, and the pin is stronger than one). Each pin has
// its own connection pool, so a connection is never shared between two pins.

export interface KeepAliveFetchOptions {
  /** Sockets per control-plane origin. */
  maxSockets?: number;
}

/** fetch's init, plus the certificate an https call accepts (its DER's SHA-256, hex). */
export type PinnedRequestInit = RequestInit & { certSha256?: string | undefined };

/** An answer, with the SHA-256 of the certificate its connection presented (https only). */
export type PinnedResponse = Response & { peerCertSha256?: string };

export type PinnedFetch = (
  input: string | URL | Request,
  init?: PinnedRequestInit,
) => Promise<PinnedResponse>;

/** Thrown (as the cause of fetch's TypeError) when the peer's certificate is not the pinned one. */
export class CertificatePinError extends Error {
  override readonly name = "CertificatePinError";
  readonly code = "ERR_THAW_CERT_PIN";
}

/** Pools kept per pin: more than the largest fleet a scheduler serves. */
const PINNED_POOLS_KEPT = 20_000;

export function certificateSha256(der: Buffer): string {
  return createHash("sha256").update(der).digest("hex");
}

export function keepAliveFetch(options: KeepAliveFetchOptions = {}): PinnedFetch {
  const agentOptions = {
    keepAlive: true,
    maxSockets: options.maxSockets ?? 64,
    keepAliveMsecs: 10_000,
  };
  const agents = { "http:": new http.Agent(agentOptions), "https:": new https.Agent(agentOptions) };
  const pinned = new Map<string, PinnedHttpsAgent>();
  const pinnedAgent = (certSha256: string) => {
    let agent = pinned.get(certSha256);
    if (!agent) {
      if (pinned.size >= PINNED_POOLS_KEPT) {
        for (const old of pinned.values()) old.destroy();
        pinned.clear();
      }
      agent = new PinnedHttpsAgent(certSha256, agentOptions);
      pinned.set(certSha256, agent);
    }
    return agent;
  };

  const request = (
    input: string | URL | Request,
    init: PinnedRequestInit = {},
  ): Promise<PinnedResponse> => {
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    const transport =
      url.protocol === "https:" ? https : url.protocol === "http:" ? http : undefined;
    if (!transport) return Promise.reject(new TypeError(`unsupported protocol ${url.protocol}`));
    const pin = init.certSha256?.toLowerCase();
    if (pin !== undefined && (url.protocol !== "https:" || !/^[0-9a-f]{64}$/.test(pin)))
      return Promise.reject(
        new TypeError("a pinned call needs an https URL and a SHA-256 (64 hex digits)"),
      );
    const body = typeof init.body === "string" ? init.body : undefined;
    if (init.body !== undefined && init.body !== null && body === undefined) {
      return Promise.reject(new TypeError("keepAliveFetch sends string bodies only"));
    }
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => (headers[key] = value));
    if (body !== undefined) headers["content-length"] = String(Buffer.byteLength(body));

    return new Promise<Response>((resolve, reject) => {
      const signal = init.signal ?? undefined;
      if (signal?.aborted) {
        reject(abortError(signal));
        return;
      }
      const outgoing = transport.request(
        url,
        {
          method: init.method ?? "GET",
          headers,
          agent: pin ? pinnedAgent(pin) : agents[url.protocol as "http:" | "https:"],
        },
        (incoming) => {
          // Read now: the socket goes back to the pool when the answer has ended.
          const socket = incoming.socket as Partial<tls.TLSSocket> | null;
          const peer = socket?.getPeerCertificate?.();
          const chunks: Buffer[] = [];
          incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
          incoming.on("error", fail);
          incoming.on("end", () => {
            signal?.removeEventListener("abort", onAbort);
            const status = incoming.statusCode ?? 0;
            const text = Buffer.concat(chunks).toString("utf8");
            resolve({
              ...(peer?.raw ? { peerCertSha256: certificateSha256(peer.raw) } : {}),
              ok: status >= 200 && status < 300,
              status,
              statusText: incoming.statusMessage ?? "",
              headers: new Headers(incoming.headers as Record<string, string>),
              text: () => Promise.resolve(text),
              json: () => Promise.resolve(JSON.parse(text) as unknown),
            } as PinnedResponse);
          });
        },
      );
      function fail(error: Error) {
        signal?.removeEventListener("abort", onAbort);
        reject(new TypeError("fetch failed", { cause: error }));
      }
      function onAbort() {
        outgoing.destroy(abortError(signal!));
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      outgoing.on("error", (error) => (signal?.aborted ? reject(abortError(signal)) : fail(error)));
      outgoing.end(body);
    });
  };
  return request;
}

/**
 * An https pool whose connections are to one certificate: the handshake's certificate is
 * compared with the pin before the socket is handed to a request. No session is resumed (a
 * resumed session would skip presenting the certificate).
 */
class PinnedHttpsAgent extends https.Agent {
  constructor(
    private readonly certSha256: string,
    options: https.AgentOptions,
  ) {
    super({ ...options, rejectUnauthorized: false, maxCachedSessions: 0 });
  }

  override createConnection(
    options: http.ClientRequestArgs,
    callback?: (err: Error | null, stream: Duplex) => void,
  ): Duplex | null | undefined {
    const socket = tls.connect({
      ...(options as tls.ConnectionOptions),
      rejectUnauthorized: false,
      session: undefined,
    });
    const onError = (error: Error) => callback?.(error, socket);
    socket.once("error", onError);
    socket.once("secureConnect", () => {
      socket.off("error", onError);
      const raw = socket.getPeerCertificate().raw as Buffer | undefined;
      const presented = raw ? certificateSha256(raw) : "none";
      if (presented !== this.certSha256) {
        const error = new CertificatePinError(
          `the agent presented certificate sha256:${presented.slice(0, 16)}…, not the one pinned at join (sha256:${this.certSha256.slice(0, 16)}…)`,
        );
        socket.destroy();
        callback?.(error, socket);
        return;
      }
      callback?.(null, socket);
    });
    return undefined;
  }
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error
    ? reason
    : new DOMException("This operation was aborted", "AbortError");
}
