import { describe, expect, it } from "vitest";
import { allowedRestMethods, restPathMethods } from "../rest/rest-methods.ts";
import {
  declaredBodyTooLarge,
  refusal,
  securityHeaders,
  undeclaredBodyOutsideApi,
} from "./request-edge.ts";

const table = restPathMethods({
  "/api/v1/endpoints": { get: {}, post: {} },
  "/api/v1/endpoints/{endpoint}/replicas": { put: {} },
  "/api/v1/cold-starts/{id}": { get: {} },
});
const allowed = (path: string) => allowedRestMethods(table, path);

describe("REST path table", () => {
  it("matches templates segment by segment, with HEAD wherever GET is declared", () => {
    expect(allowed("/api/v1/endpoints")).toEqual(["GET", "POST", "HEAD"]);
    expect(allowed("/api/v1/endpoints/")).toEqual(["GET", "POST", "HEAD"]);
    expect(allowed("/api/v1/endpoints/llama/replicas?x=1")).toEqual(["PUT"]);
    expect(allowed("/api/v1/endpoints/a/b/replicas")).toBeUndefined();
    expect(allowed("/api/v1/endpoints/llama")).toBeUndefined();
    expect(allowed("/sign-in")).toBeUndefined();
  });
});

describe("method guard", () => {
  it("refuses an undeclared method on a REST path, naming what is allowed", () => {
    expect(refusal("DELETE", "/api/v1/endpoints/x/replicas", allowed)).toEqual({
      allow: ["PUT"],
      message: "DELETE is not allowed on this resource; it allows PUT.",
    });
    expect(refusal("patch", "/api/v1/endpoints", allowed)?.allow).toEqual(["GET", "POST", "HEAD"]);
  });

  it("passes declared methods, OPTIONS, and anything on a path that is not REST", () => {
    expect(refusal("PUT", "/api/v1/endpoints/x/replicas", allowed)).toBeUndefined();
    expect(refusal("HEAD", "/api/v1/cold-starts/1", allowed)).toBeUndefined();
    expect(refusal("OPTIONS", "/api/v1/endpoints/x/replicas", allowed)).toBeUndefined();
    expect(refusal("DELETE", "/api/trpc/endpoints.list", allowed)).toBeUndefined();
  });

  it("refuses TRACE and TRACK everywhere: the fetch standard cannot represent them", () => {
    expect(refusal("TRACE", "/api/v1/endpoints", allowed)?.allow).toEqual(["GET", "POST", "HEAD"]);
    expect(refusal("TRACK", "/", allowed)?.allow).toContain("GET");
  });
});

describe("declared body size", () => {
  it("refuses a body declared larger than any route accepts, before it is read", () => {
    expect(declaredBodyTooLarge(String(100 * 1024 * 1024))).toBe(true);
    expect(declaredBodyTooLarge(String(1024 * 1024))).toBe(false);
    expect(declaredBodyTooLarge(undefined)).toBe(false);
  });

  it("refuses a chunked body outside /api/ (Next would buffer it), not under /api/", () => {
    const chunked = { "transfer-encoding": "chunked" };
    expect(undeclaredBodyOutsideApi("/", chunked)).toBe(true);
    expect(undeclaredBodyOutsideApi("/endpoints/x", chunked)).toBe(true);
    expect(undeclaredBodyOutsideApi("/api/v1/endpoints", chunked)).toBe(false);
    expect(undeclaredBodyOutsideApi("/", { "content-length": "12" })).toBe(false);
    expect(undeclaredBodyOutsideApi("/", {})).toBe(false);
  });
});

describe("security headers", () => {
  it("forbid framing and eval in production, and pin https only when served over it", () => {
    const prod = securityHeaders({ publicUrl: "https://thaw.example.com", development: false });
    expect(prod["content-security-policy"]).toContain("frame-ancestors 'none'");
    expect(prod["content-security-policy"]).not.toContain("unsafe-eval");
    expect(prod["x-frame-options"]).toBe("DENY");
    expect(prod["strict-transport-security"]).toMatch(/^max-age=\d+/);
    const dev = securityHeaders({ publicUrl: "http://localhost:3000", development: true });
    expect(dev["content-security-policy"]).toContain("'unsafe-eval'");
    expect(dev["strict-transport-security"]).toBeUndefined();
  });
});
