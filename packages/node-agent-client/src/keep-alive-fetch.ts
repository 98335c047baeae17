import http from "node:http";
import https from "node:https";

// The subset of fetch this package's clients use (method, headers, string body, an abort
// signal; status and text back) on node:http with a keep-alive agent. undici's fetch spends
// most of its time building WHATWG streams and signals: a third of the agent's CPU in the
// sim-fleet benchmark's profile (~200 heartbeats and hundreds of telemetry batches a second
// from one process), and a tenth of a scheduler's in bench:placement's (a start request
// per cold start).

export interface KeepAliveFetchOptions {
  /** Sockets per control-plane origin. */
  maxSockets?: number;
}

export function keepAliveFetch(options: KeepAliveFetchOptions = {}): typeof fetch {
  const agentOptions = {
    keepAlive: true,
    maxSockets: options.maxSockets ?? 64,
    keepAliveMsecs: 10_000,
  };
  const agents = { "http:": new http.Agent(agentOptions), "https:": new https.Agent(agentOptions) };

  const request = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    const transport =
      url.protocol === "https:" ? https : url.protocol === "http:" ? http : undefined;
    if (!transport) return Promise.reject(new TypeError(`unsupported protocol ${url.protocol}`));
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
          agent: agents[url.protocol as "http:" | "https:"],
        },
        (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
          incoming.on("error", fail);
          incoming.on("end", () => {
            signal?.removeEventListener("abort", onAbort);
            const status = incoming.statusCode ?? 0;
            const text = Buffer.concat(chunks).toString("utf8");
            resolve({
              ok: status >= 200 && status < 300,
              status,
              statusText: incoming.statusMessage ?? "",
              headers: new Headers(incoming.headers as Record<string, string>),
              text: () => Promise.resolve(text),
              json: () => Promise.resolve(JSON.parse(text) as unknown),
            } as Response);
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

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error
    ? reason
    : new DOMException("This operation was aborted", "AbortError");
}
