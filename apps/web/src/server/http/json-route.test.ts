import { DatabaseBusyError } from "@thaw/db";
import { AppError } from "@thaw/core";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { bearerToken, errorResponse, jsonResponse, jsonRoute, readJsonBody } from "./json-route.ts";

const request = (body: string | null, headers: Record<string, string> = {}) =>
  new Request("http://localhost/api/x", { method: "POST", body, headers });

describe("json routes", () => {
  beforeAll(() => {
    vi.stubEnv("DATABASE_URL", "postgresql://unused@127.0.0.1:1/unused");
    vi.stubEnv("BETTER_AUTH_SECRET", "unit-test-secret-that-is-32-chars-long");
    vi.stubEnv(
      "THAW_AGENT_CALL_PUBLIC_KEY",
      "MCowBQYDK2VwAyEAnXcAANsPB7C8cJmzrTEiFiW5aPEgySmtDHtbmwfmUfY=",
    );
    vi.stubEnv("LOG_LEVEL", "silent");
  });

  it("a small JSON answer is not for caching and asks not to be compressed; a large one may be", async () => {
    const small = jsonResponse({ accepted: 3, duplicates: 0 });
    expect(small.headers.get("content-type")).toBe("application/json");
    expect(small.headers.get("cache-control")).toBe("no-store, no-transform");
    expect(await small.json()).toEqual({ accepted: 3, duplicates: 0 });
    const large = jsonResponse({ items: "x".repeat(4096) }, { status: 201 });
    expect(large.status).toBe(201);
    expect(large.headers.get("cache-control")).toBe("no-store");
    const kept = jsonResponse({}, { headers: { "cache-control": "private, max-age=5" } });
    expect(kept.headers.get("cache-control")).toBe("private, max-age=5, no-transform");
  });

  it("a database too busy for the request is a 503 to retry in a second, never a 500", async () => {
    // What Prisma throws when the pool gave no transaction in time (its P2028).
    const busy = Object.assign(
      new Error("Transaction API error: Unable to start a transaction in the given time."),
      { code: "P2028" },
    );
    const response = errorResponse(busy, request(null));
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(await response.json()).toMatchObject({
      error: { code: "UNAVAILABLE", details: { retryAfterSeconds: 1 } },
    });
    // What the direct path throws when the pool gave no connection in time.
    const direct = errorResponse(new DatabaseBusyError(2_000), request(null));
    expect(direct.status).toBe(503);
    expect(direct.headers.get("retry-after")).toBe("1");
    const other = Object.assign(new Error("unique constraint"), { code: "P2002" });
    expect(errorResponse(other, request(null)).status).toBe(500);
  });

  it("maps an AppError to its status with code, message and details", async () => {
    const response = errorResponse(
      new AppError("FORBIDDEN", "No.", { permission: "fleet:write" }),
      request(null),
    );
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({
      error: { code: "FORBIDDEN", message: "No.", details: { permission: "fleet:write" } },
    });
  });

  it("answers 500 for anything unexpected without leaking its message", async () => {
    const handler = jsonRoute(() =>
      Promise.reject(new Error("connect ECONNREFUSED postgres://admin:hunter2@db")),
    );
    const response = await handler(request("{}"));
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toMatch(/hunter2|ECONNREFUSED/);
    expect(JSON.parse(text)).toMatchObject({ error: { code: "INTERNAL" } });
  });

  it("refuses a declared Content-Length over the limit before reading", async () => {
    await expect(
      readJsonBody(request("{}", { "content-length": "2000000" })),
    ).rejects.toMatchObject({ code: "PAYLOAD_TOO_LARGE" });
  });

  it("refuses an empty body and malformed JSON as BAD_REQUEST", async () => {
    await expect(readJsonBody(request(null))).rejects.toMatchObject({
      code: "BAD_REQUEST",
      details: { field: "body" },
    });
    await expect(readJsonBody(request("{"))).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });

  it("reads bearer tokens", () => {
    expect(bearerToken(request(null, { authorization: "Bearer abc_123" }))).toBe("abc_123");
    expect(bearerToken(request(null, { authorization: "bearer  abc " }))).toBe("abc");
    expect(bearerToken(request(null, { authorization: "Basic abc" }))).toBeNull();
    expect(bearerToken(request(null))).toBeNull();
  });
});
