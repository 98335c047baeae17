import { openApiDocument } from "../rest/openapi-document.ts";

// The `route` label of a request: something from a closed set, never the raw path (REST paths
// carry ids, and anyone can send any path or procedure name; each distinct label value is a
// series Prometheus keeps).

let restTemplates: { template: string; pattern: RegExp }[] | undefined;

/** The OpenAPI path template a REST path matches ("/api/v1/endpoints/{endpoint}"), or "unmatched". */
export function restRouteLabel(request: Request): string {
  restTemplates ??= Object.keys(openApiDocument().paths ?? {}).map((template) => ({
    template,
    pattern: new RegExp(
      `^${template
        .split(/\{[^}]+\}/)
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        .join("[^/]+")}$`,
    ),
  }));
  const path = new URL(request.url).pathname.replace(/\/+$/, "");
  return restTemplates.find((t) => t.pattern.test(path))?.template ?? "unmatched";
}

/** Agent API routes have no parameters: the path is the label (Next routes only those here). */
export function agentRouteLabel(request: Request): string {
  return new URL(request.url).pathname;
}
