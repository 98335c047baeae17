import {
  AppError,
  databaseBusyError,
  httpStatusOf,
  isAppError,
  type AppErrorDetails,
} from "@thaw/core";
import { log } from "../logger.ts";

/** Largest JSON body a route accepts; larger bodies are refused with 413 before parsing. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

export interface ErrorBody {
  error: { code: string; message: string; details: AppErrorDetails | null };
}

/**
 * Reads a request body as JSON, refusing more than `limitBytes` (by Content-Length when
 * given, and by counting while streaming when not) and malformed JSON.
 */
export async function readJsonBody(
  request: Request,
  limitBytes = MAX_JSON_BODY_BYTES,
): Promise<unknown> {
  const text = Buffer.from(await readBodyBytes(request, limitBytes)).toString("utf8");
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new AppError("BAD_REQUEST", "Request body must be a JSON document.", { field: "body" });
  }
}

/**
 * Reads a request body's bytes, refusing more than `limitBytes` (PAYLOAD_TOO_LARGE) by
 * Content-Length when given and by counting while streaming when not: a larger body is never
 * held in memory.
 */
export async function readBodyBytes(request: Request, limitBytes: number): Promise<Uint8Array> {
  const tooLarge = () =>
    new AppError("PAYLOAD_TOO_LARGE", `Request body exceeds ${limitBytes} bytes.`, { limitBytes });
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limitBytes) throw tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limitBytes) {
        await reader.cancel();
        throw tooLarge();
      }
      chunks.push(value);
    }
  }
  return Buffer.concat(chunks);
}

/** Below this an answer goes uncompressed: gzip's header and a fresh stream cost more than they save. */
const COMPRESSION_THRESHOLD_BYTES = 1024;

/**
 * A JSON response, not for caching. Next gzips every response whose client accepts it, however
 * small (it streams bodies, so the compression middleware never sees a length to hold
 * against its 1 KiB threshold): a 30-byte answer to an agent or an autoscaler cost a fresh
 * zlib stream, ~40% of the web process's CPU per telemetry batch in bench:ingest. A small
 * answer says `no-transform`, which the middleware honours; large ones are still compressed.
 */
export function jsonResponse(body: unknown, init: ResponseInit = {}): Response {
  const text = JSON.stringify(body);
  const headers = new Headers(init.headers);
  headers.set("content-type", "application/json");
  if (!headers.has("cache-control")) headers.set("cache-control", "no-store");
  if (Buffer.byteLength(text) < COMPRESSION_THRESHOLD_BYTES)
    headers.set("cache-control", `${headers.get("cache-control")}, no-transform`);
  return new Response(text, { ...init, headers });
}

/** The bearer token of an Authorization header, or null. */
export function bearerToken(request: Request): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "");
  return match?.[1] ?? null;
}

/** Maps any thrown value to a JSON error response; unexpected errors are logged, not leaked. */
export function errorResponse(error: unknown, request: Request): Response {
  const busy = databaseBusyError(error);
  if (busy) {
    log().warn(
      { method: request.method, path: new URL(request.url).pathname },
      "database too busy for a request: answered 503",
    );
    return errorResponse(busy, request);
  }
  if (isAppError(error)) {
    const body: ErrorBody = {
      error: { code: error.code, message: error.message, details: error.details ?? null },
    };
    const retryAfter = error.details?.retryAfterSeconds;
    // Every 429 says when to come back (RFC 9110 §10.2.3), and a 503 that knows does too.
    const headers: Record<string, string> =
      error.code === "RATE_LIMITED"
        ? { "retry-after": String(typeof retryAfter === "number" ? retryAfter : 60) }
        : error.code === "UNAVAILABLE" && typeof retryAfter === "number"
          ? { "retry-after": String(retryAfter) }
          : {};
    return jsonResponse(body, { status: httpStatusOf(error.code), headers });
  }
  const errorId = crypto.randomUUID();
  log().error(
    { err: error, errorId, method: request.method, path: new URL(request.url).pathname },
    "unhandled error in route",
  );
  const body: ErrorBody = {
    error: { code: "INTERNAL", message: `Internal server error (id ${errorId}).`, details: null },
  };
  return jsonResponse(body, { status: 500 });
}

/**
 * Wraps a route handler that returns a JSON-serialisable value: 200 with the value, or the
 * mapped error. Keeps each route to parse → call core → return.
 */
export function jsonRoute(
  handler: (request: Request) => Promise<unknown>,
): (request: Request) => Promise<Response> {
  return async (request) => {
    try {
      return jsonResponse(await handler(request));
    } catch (error) {
      return errorResponse(error, request);
    }
  };
}
