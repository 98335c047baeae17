export { actorCan, actorIdOf, assertCan, orgScope, type Actor } from "./actor.ts";
export {
  API_KEY_SCOPES,
  PERMISSIONS,
  ROLE_PERMISSIONS,
  type ApiKeyScope,
  type Permission,
} from "./permissions.ts";
