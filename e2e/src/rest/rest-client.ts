import { createApiKey, type ApiKeyScope } from "@thaw/core";
import type { DbClient } from "@thaw/db";

// A REST v1 client for tests: plain fetch against the running server, as any client calls it.

export interface RestAnswer {
  status: number;
  headers: Headers;
  /** The parsed JSON body (undefined when the body was empty or not JSON). */
  json: unknown;
  text: string;
}

export interface RestCall {
  /** The API key; null sends no Authorization header. */
  key?: string | null;
  /** A value to send as JSON, or a string sent as it is. */
  body?: unknown;
  headers?: Record<string, string>;
}

export function restClient(baseUrl: string, defaultKey?: string) {
  return async function call(method: string, path: string, init: RestCall = {}) {
    const key = init.key === undefined ? defaultKey : init.key;
    const body =
      init.body === undefined
        ? undefined
        : typeof init.body === "string"
          ? init.body
          : JSON.stringify(init.body);
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...init.headers,
      },
      ...(body !== undefined ? { body } : {}),
    });
    const text = response.headers.get("content-type")?.includes("event-stream")
      ? (await response.body?.cancel(), "")
      : await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    const answer: RestAnswer = { status: response.status, headers: response.headers, json, text };
    return answer;
  };
}

/** A new API key of an org with the given scopes (the secret, shown once). */
export async function newApiKey(
  db: DbClient,
  orgId: string,
  scopes: readonly ApiKeyScope[],
  extra: { name?: string; expiresInDays?: number } = {},
): Promise<string> {
  const created = await createApiKey({
    actor: { type: "system", orgId },
    input: { name: extra.name ?? "e2e", scopes: [...scopes], ...extra },
    db,
  });
  return created.secret;
}
