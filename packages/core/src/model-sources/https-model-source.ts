import { FetchRefusedError, fetchPublic, type PublicResponse } from "../net/public-fetch.ts";
import { formatOfFile } from "./detect-model-format.ts";
import { listFiles, type ModelArtifact } from "./model-artifact.ts";
import {
  GIVE_MODEL_BYTES,
  modelSourceError,
  OR_GIVE_MODEL_BYTES,
  timeoutError,
} from "./model-source-error.ts";
import { sizeFromHead, sizeFromRangedGet } from "./http-size-headers.ts";

// https://host/path sized with a HEAD, or, where HEAD is refused or says no length (an S3
// presigned URL is signed for GET only), a GET of one byte whose Content-Range carries the
// total. The URL is the client's, so every request goes through fetchPublic: no loopback,
// private or metadata address, on the first hop, after DNS, or after a redirect.

/** A ranged GET's answer is one byte; a server that ignores Range is cut off at this. */
const MAX_RANGED_BODY_BYTES = 64 * 1024;

export interface HttpsModelSourceConfig {
  /** host or host:port the operator trusts although private (an internal mirror; tests). */
  trustedHosts?: ReadonlySet<string>;
}

export interface SizeHttpsModelSourceOptions {
  source: string;
  url: URL;
  config: HttpsModelSourceConfig;
  timeoutMs: number;
  signal?: AbortSignal;
}

export async function sizeHttpsModelSource(
  options: SizeHttpsModelSourceOptions,
): Promise<ModelArtifact> {
  const endsAt = Date.now() + options.timeoutMs;
  const request = (method: "GET" | "HEAD", headers: Record<string, string>, maxBodyBytes: number) =>
    fetchPublic(options.url.toString(), {
      method,
      // The size wanted is the file's, not a compressed body's.
      headers: { "accept-encoding": "identity", ...headers },
      timeoutMs: Math.max(1, endsAt - Date.now()),
      maxBodyBytes,
      trustedHosts: options.config.trustedHosts,
      signal: options.signal,
    }).catch((error: unknown) => {
      throw fetchFailure(error, options);
    });

  // A HEAD answer has no body (fetchPublic does not bound its Content-Length, the file's).
  const head = await request("HEAD", {}, 0);
  refuseMissing(head, options);
  let answer = head;
  let bytes = sizeFromHead(head.status, head.headers);
  if (bytes === null) {
    answer = await request("GET", { range: "bytes=0-0" }, MAX_RANGED_BODY_BYTES);
    refuseMissing(answer, options);
    bytes = sizeFromRangedGet(answer.status, answer.headers, answer.body.length);
  }
  if (bytes === null && (answer.status === 401 || answer.status === 403))
    throw modelSourceError(
      "access-denied",
      `${options.url.host} refused ${options.source} (HTTP ${answer.status}); a model URL must be readable without credentials, ${OR_GIVE_MODEL_BYTES}`,
    );
  if (bytes === null)
    throw modelSourceError(
      "unsizable",
      `${options.url.host} gave no size for ${options.source} (HTTP ${answer.status}, no Content-Length or Content-Range); ${GIVE_MODEL_BYTES}`,
    );
  if (bytes === 0) throw modelSourceError("empty", `${options.source} is an empty file`);

  // A link that names no file (a download endpoint) may land on one that does.
  const named = fileNameOf(options.url);
  const landed = fileNameOf(new URL(answer.url));
  const path =
    named && (formatOfFile(named) !== "unknown" || !landed)
      ? named
      : (landed ?? options.url.hostname);
  const etag = answer.headers.etag?.replace(/^W\//, "").replace(/"/g, "");
  return {
    source: options.source,
    format: formatOfFile(path),
    sharded: false,
    ...listFiles([{ path, bytes }]),
    ...(etag ? { revision: etag } : {}),
  };
}

function fileNameOf(url: URL): string | null {
  const last = url.pathname.slice(url.pathname.lastIndexOf("/") + 1);
  try {
    return decodeURIComponent(last) || null;
  } catch {
    return last || null;
  }
}

/** A 404, or a refusal of credentials, is the answer: no fallback request asks again. */
function refuseMissing(answer: PublicResponse, options: SizeHttpsModelSourceOptions): void {
  if (answer.status === 404 || answer.status === 410)
    throw modelSourceError(
      "not-found",
      `${options.url.host} has no file at ${options.source} (HTTP ${answer.status})`,
    );
  if (answer.status === 401 && answer.headers["www-authenticate"])
    throw modelSourceError(
      "access-denied",
      `${options.source} asks for credentials (HTTP 401); a model URL must be readable without them (a presigned URL that has not expired)`,
    );
}

function fetchFailure(error: unknown, options: SizeHttpsModelSourceOptions): unknown {
  // The caller's cancellation passes through as it came.
  if (options.signal?.aborted) return options.signal.reason ?? error;
  if (!(error instanceof FetchRefusedError)) return error;
  switch (error.reason) {
    case "non-public-address":
      return modelSourceError(
        "invalid",
        `Thaw fetches model sources from public hosts only: ${error.message}`,
      );
    case "timeout":
      return timeoutError(options.url.host, options.timeoutMs);
    case "too-large":
      return modelSourceError(
        "unsizable",
        `${options.url.host} answers neither a HEAD with Content-Length nor a Range request for ${options.source}; ${GIVE_MODEL_BYTES}`,
      );
    case "too-many-redirects":
      return modelSourceError("unsizable", `${error.message}; ${GIVE_MODEL_BYTES}`);
    case "network":
      return modelSourceError(
        "unreachable",
        `could not reach ${options.url.host} (${error.message}); check the URL, ${OR_GIVE_MODEL_BYTES}`,
      );
  }
}
