import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { clientAddress, type Cidr } from "./client-address.ts";
import { CLIENT_ADDRESS_HEADER } from "./client-of.ts";
import { MAX_JSON_BODY_BYTES, type ErrorBody } from "./json-route.ts";

// The request edge: what every request meets before Next. It stamps the client's address
// (client-address.ts) and refuses, before Next sees them:
// - a body declared larger than any route accepts (413), so no route buffers it;
// - outside /api/, a body of undeclared length (chunked): pages and their server actions are
//   reached by browsers, which always declare it, and Next buffers such a body (up to its
//   own limit, for as long as the upload lasts) before anything of ours could count it (411).
//   The routes under /api/ count what they read themselves;
// - TRACE and TRACK, which the fetch standard forbids, so Next fails to build a Request for
//   them and answers 500 (whatever the route);
// - on a REST path, any method its OpenAPI document does not declare, which Next answers 405
//   without the `Allow` header RFC 9110 requires, or not at all for a route it has no
//   handler for.
// Installed once at server start (instrumentation.ts); the decisions are pure functions.

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

/** Whether a declared body is larger than any route accepts. */
export function declaredBodyTooLarge(contentLength: string | undefined): boolean {
  return Number(contentLength ?? "0") > MAX_JSON_BODY_BYTES;
}

/**
 * Whether a request sends a body of undeclared length to a path outside /api/. The headers
 * decide first: the target is parsed only for the rare request that streams a body.
 */
export function undeclaredBodyOutsideApi(
  target: string,
  headers: { "content-length"?: string | undefined; "transfer-encoding"?: string | undefined },
): boolean {
  if (headers["transfer-encoding"] === undefined || headers["content-length"] !== undefined)
    return false;
  // Origin-form ("/path?q") as clients send it; an absolute-form target is parsed, and one
  // that does not parse is no API path either.
  if (target.startsWith("/")) return !target.startsWith("/api/");
  try {
    return !new URL(target).pathname.startsWith("/api/");
  } catch {
    return true;
  }
}

function answer(
  response: ServerResponse,
  status: number,
  body: ErrorBody,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    // The body was not read: the connection cannot carry another request.
    connection: "close",
  });
  response.end(text);
}

export interface RequestEdgeOptions {
  allowedOnRestPath: (pathname: string) => readonly string[] | undefined;
  trustedProxies: readonly Cidr[];
  /** Headers every response carries (securityHeaders()). */
  responseHeaders: Readonly<Record<string, string>>;
}

/**
 * The security headers of every response, decided at start from how the server is reached:
 * no page of the dashboard may be framed (its scale and delete buttons would be clickjackable),
 * scripts only from itself (the App Router's inline bootstrap needs 'unsafe-inline'; eval only
 * in development, where React needs it), no MIME sniffing, no referrer across origins, no
 * powerful browser features, and HSTS when the dashboard is served over https.
 */
export function securityHeaders(o: {
  publicUrl: string;
  development: boolean;
}): Record<string, string> {
  const csp = [
    "default-src 'self'",
    `script-src 'self' 'unsafe-inline'${o.development ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
  return {
    "content-security-policy": csp,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "strict-origin-when-cross-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
    "cross-origin-opener-policy": "same-origin",
    ...(o.publicUrl.startsWith("https://")
      ? { "strict-transport-security": "max-age=63072000; includeSubDomains" }
      : {}),
  };
}

let installed = false;

/** Puts the edge in front of every HTTP server of this process (Next's included). */
export function installRequestEdge(options: RequestEdgeOptions): void {
  if (installed) return;
  installed = true;
  const proto = http.Server.prototype as unknown as {
    emit: (event: string | symbol, ...args: unknown[]) => boolean;
  };
  const emit = proto.emit;
  proto.emit = function requestEdgeEmit(this: http.Server, event, ...args) {
    if (event === "request") {
      const [request, response] = args as [IncomingMessage, ServerResponse];
      for (const [name, value] of Object.entries(options.responseHeaders))
        response.setHeader(name, value);
      request.headers[CLIENT_ADDRESS_HEADER] = clientAddress(
        request.socket.remoteAddress,
        request.headers["x-forwarded-for"],
        options.trustedProxies,
      );
      const refused = refusal(
        request.method ?? "GET",
        request.url ?? "/",
        options.allowedOnRestPath,
      );
      if (refused) {
        answer(
          response,
          405,
          {
            error: {
              code: "METHOD_NOT_ALLOWED",
              message: refused.message,
              details: { allow: refused.allow.join(", ") },
            },
          },
          { allow: refused.allow.join(", ") },
        );
        return true;
      }
      if (undeclaredBodyOutsideApi(request.url ?? "/", request.headers)) {
        answer(response, 411, {
          error: {
            code: "LENGTH_REQUIRED",
            message: "A request body to this path needs a Content-Length.",
            details: { field: "content-length" },
          },
        });
        return true;
      }
      if (declaredBodyTooLarge(request.headers["content-length"])) {
        answer(response, 413, {
          error: {
            code: "PAYLOAD_TOO_LARGE",
            message: `Request body exceeds ${MAX_JSON_BODY_BYTES} bytes.`,
            details: { limitBytes: MAX_JSON_BODY_BYTES },
          },
        });
        return true;
      }
    }
    return emit.call(this, event, ...args);
  };
}
