import { openApiDocument } from "../../../../server/rest/openapi-document.ts";

/** GET /api/v1/openapi.json — the REST API's OpenAPI 3.1 document (public). */
export function GET(): Response {
  return Response.json(openApiDocument());
}
