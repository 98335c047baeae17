// `pnpm --silent openapi`: the document /api/v1/openapi.json serves, on stdout.
import { openApiDocument } from "./openapi-document.ts";

console.log(JSON.stringify(openApiDocument(), null, 2));
