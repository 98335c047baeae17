import { AppError } from "../errors/index.ts";
import type { OrgRole } from "../vocabulary/index.ts";
import { ROLE_PERMISSIONS, type Permission } from "./permissions.ts";

/** Who is asking. Every use case takes one and scopes every query by its orgId. */
export type Actor =
  | { type: "user"; userId: string; orgId: string; role: OrgRole }
  | { type: "api_key"; apiKeyId: string; orgId: string; scopes: readonly string[] }
  | { type: "node"; nodeId: string; orgId: string }
  | { type: "system"; orgId: string };

export function actorCan(actor: Actor, permission: Permission): boolean {
  switch (actor.type) {
    case "user":
      return ROLE_PERMISSIONS[actor.role].includes(permission);
    case "api_key":
      return actor.scopes.includes(permission);
    case "node":
      return false;
    case "system":
      return true;
  }
}

/** Throws FORBIDDEN naming the missing permission. */
export function assertCan(actor: Actor, permission: Permission): void {
  if (actorCan(actor, permission)) return;
  const who =
    actor.type === "api_key"
      ? "this API key"
      : actor.type === "user"
        ? `role '${actor.role}'`
        : actor.type;
  throw new AppError("FORBIDDEN", `${who} lacks the '${permission}' permission.`, { permission });
}

/** The where-clause fragment that confines a query to the actor's org. */
export function orgScope(actor: Actor): { orgId: string } {
  return { orgId: actor.orgId };
}

/** Actor id as written to audit logs and scale events. */
export function actorIdOf(actor: Actor): string | null {
  switch (actor.type) {
    case "user":
      return actor.userId;
    case "api_key":
      return actor.apiKeyId;
    case "node":
      return actor.nodeId;
    case "system":
      return null;
  }
}
