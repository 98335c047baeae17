import type { WebServer } from "../web-server.ts";

/**
 * A route as its tests wrote it (a Request in, a Response out), answered by the built server
 * over HTTP: the same path, method, headers and (streamed) body, sent where clients send them.
 */
export function forwardTo(server: WebServer) {
  return (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    return fetch(`${server.baseUrl}${url.pathname}${url.search}`, {
      method: request.method,
      headers: request.headers,
      ...(request.body ? { body: request.body, duplex: "half" } : {}),
    } as RequestInit);
  };
}
