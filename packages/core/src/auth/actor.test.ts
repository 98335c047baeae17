import { describe, expect, it } from "vitest";
import { AppError } from "../errors/index.ts";
import {
  actorCan,
  assertCan,
  orgScope,
  PERMISSIONS,
  ROLE_PERMISSIONS,
  type Actor,
} from "./index.ts";

const user = (role: "owner" | "admin" | "member" | "viewer"): Actor => ({
  type: "user",
  userId: "u1",
  orgId: "o1",
  role,
});

describe("actor permissions", () => {
  it("roles are nested: each role can do everything the role below it can", () => {
    const order = ["viewer", "member", "admin", "owner"] as const;
    for (let i = 1; i < order.length; i++) {
      for (const p of ROLE_PERMISSIONS[order[i - 1]!])
        expect(ROLE_PERMISSIONS[order[i]!]).toContain(p);
    }
    expect(ROLE_PERMISSIONS.owner).toEqual(expect.arrayContaining([...PERMISSIONS]));
  });

  it("a viewer reads but cannot scale or manage keys", () => {
    expect(actorCan(user("viewer"), "endpoints:read")).toBe(true);
    expect(actorCan(user("viewer"), "endpoints:scale")).toBe(false);
    expect(() => assertCan(user("viewer"), "api_keys:manage")).toThrow(AppError);
  });

  it("an API key can do exactly what its scopes say", () => {
    const key: Actor = {
      type: "api_key",
      apiKeyId: "k1",
      orgId: "o1",
      scopes: ["endpoints:scale"],
    };
    expect(actorCan(key, "endpoints:scale")).toBe(true);
    expect(actorCan(key, "endpoints:read")).toBe(false);
    expect(() => assertCan(key, "endpoints:write")).toThrow(
      /this API key lacks the 'endpoints:write' permission/,
    );
  });

  it("a node actor has no dashboard permissions", () => {
    expect(PERMISSIONS.some((p) => actorCan({ type: "node", nodeId: "n1", orgId: "o1" }, p))).toBe(
      false,
    );
  });

  it("orgScope confines queries to the actor's org", () => {
    expect(orgScope(user("owner"))).toEqual({ orgId: "o1" });
  });
});
