import { API_KEY_SCOPES, createApiKey, isAppError, type ApiKeyScope } from "@thaw/core";
import { createDbClient } from "@thaw/db";
import { cliEnv } from "../env.ts";
import { CliError } from "../errors.ts";
import { emit } from "../output.ts";

/**
 * `thaw admin api-key create`: for operators bootstrapping an autoscaler without a browser.
 * Goes to the database directly (DATABASE_URL), like `org:create`; prints only the key.
 */
export async function createApiKeyAsAdmin(options: {
  org: string;
  name: string;
  scope: string[];
  expiresInDays?: number;
  json?: boolean;
}): Promise<void> {
  const { DATABASE_URL } = cliEnv();
  if (!DATABASE_URL)
    throw new CliError(
      "DATABASE_URL is not set: 'thaw admin' talks to the control plane's database (source .data/services.env on a dev machine).",
    );
  const unknown = options.scope.filter((s) => !(API_KEY_SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0)
    throw new CliError(
      `unknown scope ${unknown.join(", ")}; scopes are ${API_KEY_SCOPES.join(", ")}.`,
      "scope",
    );
  const db = createDbClient({ url: DATABASE_URL, maxConnections: 1 });
  try {
    const org = await db.org.findUnique({ where: { slug: options.org } });
    if (!org) throw new CliError(`No org '${options.org}'.`, "org");
    const created = await createApiKey({
      actor: { type: "system", orgId: org.id },
      input: {
        name: options.name,
        scopes: options.scope as ApiKeyScope[],
        ...(options.expiresInDays !== undefined ? { expiresInDays: options.expiresInDays } : {}),
      },
      db,
    });
    emit(
      options.json ?? false,
      { key: created.secret, id: created.id, expiresAt: created.expiresAt },
      () => created.secret,
    );
  } catch (error) {
    if (isAppError(error)) throw new CliError(error.message, error.details?.field);
    throw error;
  } finally {
    await db.$disconnect();
  }
}
