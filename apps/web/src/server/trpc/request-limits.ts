import { MAX_JSON_BODY_BYTES } from "../http/json-route.ts";

export { MAX_TRPC_BATCH_SIZE } from "./batch-limit.ts";

/**
 * The request with its body bounded to MAX_JSON_BODY_BYTES (tRPC reads bodies whole): a
 * declared larger body is refused at once with 413, an undeclared one fails once it passes
 * the limit, which tRPC answers as a 400 parse error.
 */
export function boundedTrpcRequest(request: Request): Request | Response {
  const limit = MAX_JSON_BODY_BYTES;
  if (Number(request.headers.get("content-length") ?? "0") > limit)
    return Response.json(
      {
        error: {
          code: "PAYLOAD_TOO_LARGE",
          message: `Request body exceeds ${limit} bytes.`,
          details: { limitBytes: limit },
        },
      },
      { status: 413 },
    );
  if (!request.body) return request;
  let seen = 0;
  const counted = request.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > limit) controller.error(new Error(`Request body exceeds ${limit} bytes.`));
        else controller.enqueue(chunk);
      },
    }),
  );
  return new Request(request, { body: counted, duplex: "half" } as RequestInit);
}

/**
 * A tRPC call the dashboard could not have made: a POST that is not JSON (tRPC also parses
 * multipart and form bodies, which a plain HTML form on any site can send with the user's
 * cookie), or one from another origin (by Origin, or Sec-Fetch-Site when a browser sends it).
 * Answers 403 before the procedure runs; null when the request may proceed.
 */
export function crossSiteRefusal(request: Request, dashboardOrigin: string): Response | null {
  if (request.method !== "POST") return null;
  const refuse = (message: string) =>
    Response.json(
      { error: { code: "FORBIDDEN", message, details: null } },
      { status: 403, headers: { "cache-control": "no-store" } },
    );
  const type = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json")
    return refuse("tRPC calls are JSON (content-type: application/json).");
  const origin = request.headers.get("origin");
  if (origin !== null && origin !== dashboardOrigin)
    return refuse(`Calls from ${origin.slice(0, 100)} are not accepted.`);
  if (request.headers.get("sec-fetch-site") === "cross-site")
    return refuse("Cross-site calls are not accepted.");
  return null;
}
