import { Command, InvalidArgumentError } from "commander";
import { createApiKeyAsAdmin } from "./commands/admin-api-key.ts";
import { listNodesAsAdmin, nodeActionAsAdmin, type NodeAction } from "./commands/admin-node.ts";
import { orgQuotaAsAdmin, type QuotaArgument } from "./commands/admin-org-quota.ts";
import { apply } from "./commands/apply.ts";
import {
  deleteEndpoint,
  endpointPredictions,
  endpointStatus,
  getEndpoint,
  listEndpoints,
  scaleEndpoint,
} from "./commands/endpoints.ts";
import { login } from "./commands/login.ts";
import { watchColdStarts } from "./commands/watch.ts";
import { cliDebug } from "./env.ts";
import { CliError } from "./errors.ts";

// `thaw`: the command line of Thaw's REST API (commander parses argv; every command has
// --help). Errors print the API's message and the field it named, and exit non-zero.

const wholeNumber =
  (name: string, min = 0) =>
  (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min)
      throw new InvalidArgumentError(`${name} must be a whole number ≥ ${min}.`);
    return n;
  };

const program = new Command("thaw")
  .description("Deploy, scale and watch Thaw endpoints from the command line.")
  .option("--url <url>", "the dashboard's URL (else THAW_URL, else what 'thaw login' kept)")
  .option("--json", "print JSON instead of text")
  .showHelpAfterError()
  .configureOutput({ outputError: (text, write) => write(text) });
const globals = () => program.opts<{ url?: string; json?: boolean }>();

program
  .command("login")
  .description("check an API key and keep it (and the URL) in ~/.config/thaw (mode 0600)")
  .option("--key-stdin", "read the key from standard input")
  .action((o: { keyStdin?: boolean }) => login({ ...globals(), ...o }));

const endpoints = program.command("endpoints").description("list, show and delete endpoints");
endpoints
  .command("list")
  .description("the org's endpoints")
  .action(() => listEndpoints(globals()));
endpoints
  .command("get <endpoint>")
  .description("an endpoint's configuration and active deployment")
  .action((endpoint: string) => getEndpoint(endpoint, globals()));
endpoints
  .command("delete <endpoint>")
  .description("delete an endpoint: its replicas drain, its history stays, its slug is freed")
  .action((endpoint: string) => deleteEndpoint(endpoint, globals()));

program
  .command("scale <endpoint> <replicas>")
  .description("set an endpoint's desired replica count")
  .action((endpoint: string, replicas: string) =>
    scaleEndpoint(endpoint, wholeNumber("replicas")(replicas), globals()),
  );
program
  .command("status <endpoint>")
  .description("replicas by state and recent time to ready")
  .action((endpoint: string) => endpointStatus(endpoint, globals()));
program
  .command("predictions <endpoint>")
  .description("what each start path would take right now")
  .action((endpoint: string) => endpointPredictions(endpoint, globals()));

program
  .command("apply")
  .description(
    "create or update an endpoint from a YAML (or JSON) file; rolls a new deployment only when its spec changed",
  )
  .requiredOption("-f, --file <path>", "the endpoint file")
  .option("--dry-run", "print the diff and change nothing")
  .action((o: { file: string; dryRun?: boolean }) => apply({ ...globals(), ...o }));

const coldStarts = program.command("cold-starts").description("follow cold starts");
coldStarts
  .command("watch <endpoint>")
  .description("live: one line per cold start, a bar per phase as phases land")
  .option("--fail-on-error", "exit non-zero as soon as a cold start fails")
  .option("--count <n>", "exit once n cold starts finished", wholeNumber("--count", 1))
  .option("--timeout <seconds>", "stop waiting after this long", wholeNumber("--timeout", 1))
  .action((endpoint: string, o: { failOnError?: boolean; count?: number; timeout?: number }) =>
    watchColdStarts(endpoint, { ...globals(), ...o }),
  );

const admin = program
  .command("admin")
  .description("operator commands: talk to the database (DATABASE_URL), not the API");
admin
  .command("api-key")
  .description("API keys")
  .command("create")
  .description("create an API key for an org and print it (shown once)")
  .requiredOption("--org <slug>", "the org")
  .requiredOption("--name <name>", "what the key is for")
  .requiredOption(
    "--scope <scope...>",
    "endpoints:read, endpoints:write, endpoints:scale, deployments:write, fleet:read",
  )
  .option("--expires-in-days <n>", "lifetime (default 90)", wholeNumber("--expires-in-days", 1))
  .action((o: { org: string; name: string; scope: string[]; expiresInDays?: number }) =>
    createApiKeyAsAdmin({ ...o, json: globals().json ?? false }),
  );

const adminNode = admin
  .command("node")
  .description("nodes: their credentials, drain and revoke (each audited)");
adminNode
  .command("list")
  .description("an org's nodes and where their credentials stand")
  .requiredOption("--org <slug>", "the org")
  .action((o: { org: string }) => listNodesAsAdmin({ ...o, json: globals().json ?? false }));
const nodeActions: [NodeAction, string][] = [
  ["rotate", "replace the node's credential: its agent fetches a new one at its next heartbeat"],
  ["drain", "place nothing new on the node and move its replicas elsewhere"],
  ["revoke", "accept no credential of the node any more, and drain it"],
  ["join-token", "print a one-time join token bound to the node (its host joins again as it)"],
];
for (const [action, description] of nodeActions) {
  const command = adminNode
    .command(action)
    .description(description)
    .requiredOption("--org <slug>", "the org")
    .requiredOption("--node <name|instance id|id>", "the node");
  if (action === "drain" || action === "revoke")
    command.option("--reason <text>", "why, for the node's state and the audit log");
  if (action === "join-token")
    command.option(
      "--ttl <seconds>",
      "how long the token is good (default 3600)",
      wholeNumber("--ttl", 60),
    );
  command.action((o: { org: string; node: string; reason?: string; ttl?: number }) =>
    nodeActionAsAdmin(action, { ...o, json: globals().json ?? false }),
  );
}

const quotaArgument =
  (name: string, parse: (value: string) => number) =>
  (value: string): QuotaArgument =>
    value === "default" ? "default" : parse(value);
const positiveAmount = (name: string) => (value: string) => {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0)
    throw new InvalidArgumentError(`${name} must be an amount ≥ 0 (USD per hour).`);
  return n;
};
admin
  .command("org")
  .description("orgs")
  .command("quota")
  .description(
    "show one org's quotas beside what it holds; with a setting, set its own (default: back to THAW_ORG_MAX_*)",
  )
  .requiredOption("--org <slug>", "the org")
  .option(
    "--endpoints <n|default>",
    "live endpoints",
    quotaArgument("--endpoints", wholeNumber("--endpoints")),
  )
  .option(
    "--api-keys <n|default>",
    "live API keys",
    quotaArgument("--api-keys", wholeNumber("--api-keys")),
  )
  .option(
    "--replicas-per-endpoint <n|default>",
    "an endpoint's maxReplicas",
    quotaArgument("--replicas-per-endpoint", wholeNumber("--replicas-per-endpoint")),
  )
  .option(
    "--gpus <n|default>",
    "GPUs over all endpoints at their maxReplicas",
    quotaArgument("--gpus", wholeNumber("--gpus")),
  )
  .option(
    "--spend-cap <usd|default>",
    "USD per hour the org's launched hosts may cost (default: the fleet config's)",
    quotaArgument("--spend-cap", positiveAmount("--spend-cap")),
  )
  .action((o: Omit<Parameters<typeof orgQuotaAsAdmin>[0], "json">) =>
    orgQuotaAsAdmin({ ...o, json: globals().json ?? false }),
  );

try {
  await program.parseAsync();
} catch (error) {
  if (error instanceof CliError) {
    process.stderr.write(
      `error: ${error.message}${error.field ? ` (field: ${error.field})` : ""}\n`,
    );
    process.exitCode = error.exitCode;
  } else {
    // Not one of ours (a bad THAW_URL, an unreadable config, a bug): its message, not a
    // stack trace, unless asked for.
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(
      cliDebug()
        ? `${error instanceof Error ? (error.stack ?? message) : message}\n`
        : `error: ${message}\n(set THAW_DEBUG=1 to see where it came from)\n`,
    );
    process.exitCode = 1;
  }
}
