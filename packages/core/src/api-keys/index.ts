export { API_KEY_KIND, CreateApiKeyInput, createApiKey } from "./create-api-key.ts";
export { authenticateApiKey } from "./authenticate-api-key.ts";
export { listApiKeys } from "./list-api-keys.ts";
export { RevokeApiKeyInput, revokeApiKey } from "./revoke-api-key.ts";
