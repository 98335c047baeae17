import { openApiDocument } from "./openapi-document.ts";

// Which methods each REST path answers, read from the OpenAPI document — the one place that
// declares them — so an undeclared method is a 405 naming the allowed ones (RFC 9110 §15.5.6)
// rather than whatever the framework does with it.

export interface RestPathMethods {
  /** The document's path template, e.g. /api/v1/endpoints/{endpoint}. */
  template: string;
  pattern: RegExp;
  /** Upper-case methods, HEAD wherever GET is declared. */
  methods: readonly string[];
}

const DOCUMENT_METHODS = ["get", "put", "post", "delete", "patch", "options", "head", "trace"];

/** The path table of an OpenAPI document's `paths`. */
export function restPathMethods(paths: Record<string, object>): RestPathMethods[] {
  return Object.entries(paths).map(([template, item]) => {
    const declared = DOCUMENT_METHODS.filter((m) => m in item).map((m) => m.toUpperCase());
    if (declared.includes("GET") && !declared.includes("HEAD")) declared.push("HEAD");
    const pattern = new RegExp(
      "^" +
        template
          .split(/\{[^}]+\}/)
          .map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
          .join("[^/]+") +
        "/?$",
    );
    return { template, pattern, methods: declared };
  });
}

/**
 * The methods a REST path allows, or undefined when it is no REST path (Next answers 404).
 * `pathname` is the raw request path; a query string is ignored.
 */
export function allowedRestMethods(
  table: readonly RestPathMethods[],
  pathname: string,
): readonly string[] | undefined {
  const path = pathname.split("?")[0] ?? "";
  return table.find((route) => route.pattern.test(path))?.methods;
}

let table: RestPathMethods[] | undefined;

/** The served document's path table (built once per process). */
export function servedRestPathMethods(): RestPathMethods[] {
  table ??= restPathMethods(openApiDocument().paths ?? {});
  return table;
}
