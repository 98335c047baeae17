import type { OrgRole } from "../vocabulary/index.ts";

/**
 * Every permission a use case can demand. API key scopes are a subset of these strings, so
 * one check serves dashboard users and REST keys alike.
 */
export const PERMISSIONS = [
  "endpoints:read",
  "endpoints:write",
  "endpoints:scale",
  "deployments:write",
  "fleet:read",
  "fleet:write",
  "api_keys:manage",
  "org_settings:manage",
  "registries:manage",
  "webhooks:manage",
  "alerts:manage",
  "members:manage",
  "members:manage_owners",
  "audit:read",
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** Scopes an API key may carry (members and keys are managed by people only). */
export const API_KEY_SCOPES = [
  "endpoints:read",
  "endpoints:write",
  "endpoints:scale",
  "deployments:write",
  "fleet:read",
  "registries:manage",
  "webhooks:manage",
  "alerts:manage",
] as const satisfies readonly Permission[];
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

const VIEWER: readonly Permission[] = ["endpoints:read", "fleet:read"];
const MEMBER: readonly Permission[] = [
  ...VIEWER,
  "endpoints:write",
  "endpoints:scale",
  "deployments:write",
];
const ADMIN: readonly Permission[] = [
  ...MEMBER,
  "fleet:write",
  "api_keys:manage",
  "org_settings:manage",
  "registries:manage",
  "webhooks:manage",
  "alerts:manage",
  "audit:read",
  // Admins invite, re-role and remove members up to admin; the owner role is the owners' own.
  "members:manage",
];
const OWNER: readonly Permission[] = [...ADMIN, "members:manage_owners"];

export const ROLE_PERMISSIONS: Record<OrgRole, readonly Permission[]> = {
  owner: OWNER,
  admin: ADMIN,
  member: MEMBER,
  viewer: VIEWER,
};
