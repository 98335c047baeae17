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
