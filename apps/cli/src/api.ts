import createClient, { type Client } from "openapi-fetch";
import type { Target } from "./config.ts";
import { CliError } from "./errors.ts";
import type { components, paths } from "./generated/api.d.ts";

// The typed REST client (openapi-fetch over the types generated from the OpenAPI document).

export type Schemas = components["schemas"];
export type Api = Client<paths>;

export function createApi(target: Target): Api {
  if (!target.key)
    throw new CliError(
      "No API key: run 'thaw login', or set THAW_API_KEY (create a key in the dashboard's API keys card, or with 'thaw admin api-key create').",
    );
  return createClient<paths>({
    baseUrl: target.url,
    headers: { authorization: `Bearer ${target.key}` },
  });
}

/** The answer's data, or a CliError with the API's message and the field it named. */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
  url: string,
): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch (error) {
    const cause =
      error instanceof Error
        ? ((error.cause as Error | undefined)?.message ?? error.message)
        : String(error);
    throw new CliError(`Cannot reach ${url}: ${cause}. Is the dashboard running there (THAW_URL)?`);
  }
  if (result.data !== undefined && result.response.ok) return result.data;
  const body = result.error as Partial<Schemas["Error"]> | undefined;
  const message = body?.error?.message ?? `${result.response.status} ${result.response.statusText}`;
  const field = body?.error?.details?.field;
  throw new CliError(message, typeof field === "string" ? field : undefined);
}
