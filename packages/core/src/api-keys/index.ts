export { API_KEY_KIND, CreateApiKeyInput, CreatedApiKey, createApiKey } from "./create-api-key.ts";
export { authenticateApiKey } from "./authenticate-api-key.ts";
export { ApiKeyList, ApiKeyView, listApiKeys } from "./list-api-keys.ts";
export { RevokeApiKeyInput, RevokedApiKey, revokeApiKey } from "./revoke-api-key.ts";
