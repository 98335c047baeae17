import type { z } from "zod";

/**
 * A tRPC input typed as a core schema's input but validated by the use case itself, so a
 * bad field answers BAD_REQUEST with `data.details.field` naming it (as REST does) instead
 * of a second, differently shaped zod error from the transport.
 */
export function coreInput<T>() {
  return (raw: unknown): T => raw as T;
}

/** An input that names an endpoint (slug or id) and carries a body for a use case. */
export type EndpointAnd<K extends string, S extends z.ZodType> = { endpoint: string } & {
  [key in K]: z.input<S>;
};

/** The named member of a raw input object, or undefined (the use case reports it missing). */
export function member(raw: unknown, key: string): unknown {
  return typeof raw === "object" && raw !== null
    ? (raw as Record<string, unknown>)[key]
    : undefined;
}
