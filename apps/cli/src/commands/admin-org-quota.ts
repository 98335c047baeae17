import {
  DEFAULT_ORG_QUOTAS,
  getOrgQuotaUsage,
  isAppError,
  ORG_QUOTA_SETTINGS,
  setOrgQuotas,
} from "@thaw/core";
import { createDbClient } from "@thaw/db";
import { cliEnv } from "../env.ts";
import { CliError } from "../errors.ts";
import { emit, table } from "../output.ts";

/** A quota as typed: a whole number, or `default` to go back to the operator's default. */
export type QuotaArgument = number | "default";

export interface OrgQuotaOptions {
  org: string;
  endpoints?: QuotaArgument;
  apiKeys?: QuotaArgument;
  replicasPerEndpoint?: QuotaArgument;
  gpus?: QuotaArgument;
  spendCap?: QuotaArgument;
  json?: boolean;
}

/**
 * `thaw admin org quota --org <slug> [--gpus n] …`: the operator sets one org's own quotas and
 * spend cap (`default` returns one to the default for every org), then sees them beside what
 * the org holds. With no setting, it only shows them. Goes to the database (DATABASE_URL).
 */
export async function orgQuotaAsAdmin(options: OrgQuotaOptions): Promise<void> {
  const { DATABASE_URL } = cliEnv();
  if (!DATABASE_URL)
    throw new CliError(
      "DATABASE_URL is not set: 'thaw admin' talks to the control plane's database (source .data/services.env on a dev machine).",
    );
  const value = (v: QuotaArgument | undefined) => (v === "default" ? null : v);
  const settings = {
    endpoints: value(options.endpoints),
    apiKeys: value(options.apiKeys),
    replicasPerEndpoint: value(options.replicasPerEndpoint),
    gpus: value(options.gpus),
    spendCapUsdPerHour: value(options.spendCap),
  };
  const changing = Object.values(settings).some((v) => v !== undefined);
  const db = createDbClient({ url: DATABASE_URL, maxConnections: 1 });
  try {
    const org = await db.org.findUnique({ where: { slug: options.org } });
    if (!org) throw new CliError(`No org '${options.org}'.`, "org");
    const actor = { type: "system" as const, orgId: org.id };
    if (changing) await setOrgQuotas({ actor, input: settings, db });
    const usage = await getOrgQuotaUsage({ actor, db, defaults: DEFAULT_ORG_QUOTAS });
    emit(options.json ?? false, usage, () =>
      [
        table([
          ["QUOTA", "LIMIT", "USED", "SET BY"],
          ...usage.quotas.map((q) => [
            q.name,
            q.source === "org" ? String(q.limit) : "default",
            String(q.used),
            q.source === "org"
              ? "this org"
              : `${ORG_QUOTA_SETTINGS[q.name].env} (${DEFAULT_ORG_QUOTAS[q.name]} if unset)`,
          ]),
        ]),
        `spend cap: ${usage.spendCapUsdPerHour === null ? "the fleet config's defaultSpendCapUsdPerHour" : `$${usage.spendCapUsdPerHour}/h`}`,
      ].join("\n"),
    );
  } catch (error) {
    if (isAppError(error)) throw new CliError(error.message, error.details?.field);
    throw error;
  } finally {
    await db.$disconnect();
  }
}
