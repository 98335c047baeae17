import { type IncomingMessage, type ServerResponse } from "node:http";
import { type z } from "zod";
import { AgentError } from "../agent-error.ts";

// JSON in and out of node:http, with the limits and error shapes of the agent API: a body
// above 1 MiB is 413, a body that is not JSON is 415/400, a schema failure is 400 naming the
// first field at fault. Bad input is never a 500.

export const MAX_BODY_BYTES = 1024 * 1024;

/** Reads a JSON body; `undefined` when the request has none. */
export async function readJsonBody(
  request: IncomingMessage,
  limit = MAX_BODY_BYTES,
): Promise<unknown> {
  return parseJsonBody(request, await readBodyBytes(request, limit));
}

/** Reads the body's bytes (empty when there is none), refusing more than `limit`. */
export async function readBodyBytes(
  request: IncomingMessage,
  limit = MAX_BODY_BYTES,
): Promise<Buffer> {
  const declared = Number(request.headers["content-length"] ?? "NaN");
  if (Number.isFinite(declared) && declared > limit) {
    throw new AgentError(
      "body_too_large",
      `the body is ${declared} bytes; the limit is ${limit}`,
      "body",
    );
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      throw new AgentError(
        "body_too_large",
        `the body exceeds the limit of ${limit} bytes`,
        "body",
      );
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The body read by readBodyBytes as JSON; `undefined` when it is empty. */
export function parseJsonBody(request: IncomingMessage, bytes: Buffer): unknown {
  if (bytes.length === 0) return undefined;
  const type = request.headers["content-type"] ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new AgentError(
      "unsupported_media_type",
      `expected content-type application/json, got '${type || "none"}'`,
      "content-type",
    );
  }
  try {
    return JSON.parse(bytes.toString("utf8")) as unknown;
  } catch (error) {
    throw new AgentError(
      "invalid_json",
      `the body is not valid JSON: ${(error as Error).message}`,
      "body",
    );
  }
}

/** Parses with a zod schema; a failure is AgentError 400 naming the first failing field. */
export function parseBody<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => {
    // zod reports an unknown key on its parent object; name the key itself.
    const unknownKey = issue.code === "unrecognized_keys" ? issue.keys[0] : undefined;
    const path = [...issue.path.map(String), ...(unknownKey ? [unknownKey] : [])];
    return { field: path.length > 0 ? path.join(".") : "body", message: issue.message };
  });
  const first = issues[0] ?? { field: "body", message: "invalid" };
  throw new AgentError("invalid_request", `${first.field}: ${first.message}`, first.field, {
    issues,
  });
}

export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    ...headers,
  });
  response.end(text);
}

export function errorBody(error: AgentError): {
  error: { code: string; message: string; details?: Record<string, unknown> };
} {
  const details: Record<string, unknown> = { ...error.details };
  if (error.field !== undefined) details.field = error.field;
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(Object.keys(details).length > 0 ? { details } : {}),
    },
  };
}
