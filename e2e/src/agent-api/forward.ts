import type { WebServer } from "../web-server.ts";

/**
 * A route as its tests wrote it (a Request in, a Response out), answered by the built server
 * over HTTP: the same path, method, headers and (streamed) body, sent where clients send them.
 */
export function forwardTo(server: WebServer) {
  return (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    // A streamed body needs duplex "half" (Node's fetch), which DOM's RequestInit lacks.
    const init: RequestInit & { duplex?: "half" } = {
      method: request.method,
      headers: request.headers,
      ...(request.body ? { body: request.body, duplex: "half" } : {}),
    };
    return fetch(`${server.baseUrl}${url.pathname}${url.search}`, init);
  };
}
