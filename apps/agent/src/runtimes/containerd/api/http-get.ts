import http from "node:http";
import https from "node:https";

// The agent's own pull reads layer bodies of tens of GB: over node:http(s) streams it spends
// about half the CPU of fetch's web streams on the same bytes (measured: 100 MB from the local
// registry, 88–128 ms against 150–414 ms), CPU that containerd's hashing and unpacking on the
// same cores wants. Tests give the registry client a scripted fetch through `fetchHttpGet`.

export interface HttpAnswer {
  status: number;
  statusText: string;
  header(name: string): string | undefined;
  body: AsyncIterable<Uint8Array>;
  /** The whole body; refused past `limit` bytes. */
  bytes(limit: number): Promise<Buffer>;
  /** Drops the body unread. */
  discard(): void;
}

/** One GET: no redirects followed, the answer once its headers are in. */
export type HttpGet = (
  url: URL,
  o: { headers: Record<string, string>; signal: AbortSignal },
) => Promise<HttpAnswer>;

async function collect(body: AsyncIterable<Uint8Array>, limit: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > limit) throw new Error(`answer larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

export const nodeHttpGet: HttpGet = (url, o) =>
  new Promise((resolve, reject) => {
    const request = (url.protocol === "https:" ? https : http).get(
      url,
      { headers: o.headers, signal: o.signal },
      (res) => {
        resolve({
          status: res.statusCode ?? 0,
          statusText: res.statusMessage ?? "",
          header: (name) => {
            const value = res.headers[name.toLowerCase()];
            return Array.isArray(value) ? value.join(", ") : value;
          },
          body: res,
          bytes: (limit) => collect(res, limit),
          discard: () => res.destroy(),
        });
      },
    );
    request.on("error", reject);
  });

/** A fetch as an HttpGet (tests script registries with fetch-shaped functions). */
export function fetchHttpGet(doFetch: typeof fetch): HttpGet {
  return async (url, o) => {
    const answer = await doFetch(url, { headers: o.headers, signal: o.signal, redirect: "manual" });
    const body: AsyncIterable<Uint8Array> = answer.body ?? (async function* () {})();
    return {
      status: answer.status,
      statusText: answer.statusText,
      header: (name) => answer.headers.get(name) ?? undefined,
      body,
      bytes: (limit) => collect(body, limit),
      discard: () => void answer.body?.cancel().catch(() => undefined),
    };
  };
}
