import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { ErrorBody } from "./json-route.ts";

// Refuses, before Next sees them, the requests Next cannot answer well:
// - TRACE and TRACK, which the fetch standard forbids, so Next fails to build a Request for
//   them and answers 500 (whatever the route);
// - on a REST path, any method its OpenAPI document does not declare, which Next answers 405
//   without the `Allow` header RFC 9110 requires, or not at all for a route it has no
//   handler for.
// Installed once at server start (instrumentation.ts); the decision itself is `refusal`.

/** Methods the fetch standard forbids in a Request (CONNECT never reaches 'request'). */
const FETCH_FORBIDDEN_METHODS = new Set(["TRACE", "TRACK", "CONNECT"]);
/** What the server answers on a path outside the REST table. */
const SERVER_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

export interface MethodRefusal {
  allow: readonly string[];
  message: string;
}

/**
 * Whether a request's method is refused: `allowedOnRestPath` says what a REST path allows
 * (undefined: not a REST path). OPTIONS is left to Next, which answers it with `Allow`.
 */
export function refusal(
  method: string,
  pathname: string,
  allowedOnRestPath: (pathname: string) => readonly string[] | undefined,
): MethodRefusal | undefined {
  const upper = method.toUpperCase();
  const allow = allowedOnRestPath(pathname);
  if (FETCH_FORBIDDEN_METHODS.has(upper))
    return { allow: allow ?? SERVER_METHODS, message: `${upper} is not supported here.` };
  if (!allow || upper === "OPTIONS" || allow.includes(upper)) return undefined;
  return {
    allow,
    message: `${upper} is not allowed on this resource; it allows ${allow.join(", ")}.`,
  };
}

function answer(response: ServerResponse, refused: MethodRefusal): void {
  const body: ErrorBody = {
    error: {
      code: "METHOD_NOT_ALLOWED",
      message: refused.message,
      details: { allow: refused.allow.join(", ") },
    },
  };
  const text = JSON.stringify(body);
  response.writeHead(405, {
    allow: refused.allow.join(", "),
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
  });
  response.end(text);
}

let installed = false;

/** Puts the guard in front of every HTTP server of this process (Next's included). */
export function installMethodGuard(
  allowedOnRestPath: (pathname: string) => readonly string[] | undefined,
): void {
  if (installed) return;
  installed = true;
  const proto = http.Server.prototype as unknown as {
    emit: (event: string | symbol, ...args: unknown[]) => boolean;
  };
  const emit = proto.emit;
  proto.emit = function guardedEmit(this: http.Server, event, ...args) {
    if (event === "request") {
      const [request, response] = args as [IncomingMessage, ServerResponse];
      const refused = refusal(request.method ?? "GET", request.url ?? "/", allowedOnRestPath);
      if (refused) {
        // The body, if any, is not read: drain it so the connection can be reused.
        request.resume();
        answer(response, refused);
        return true;
      }
    }
    return emit.call(this, event, ...args);
  };
}
