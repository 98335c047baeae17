// Issues one-time join tokens for an org's new nodes and prints them, one per line, on
// stdout. Usage: tsx src/cli/issue-join-tokens.ts --org demo --count 4 [--ttl 3600]
import { parseArgs } from "node:util";
import { createJoinToken } from "@thaw/core";
import { createDbClient } from "@thaw/db";
import { loadCliEnv } from "./cli-env.ts";

const { values } = parseArgs({
  options: {
    org: { type: "string" },
    count: { type: "string", default: "1" },
    ttl: { type: "string", default: "3600" },
  },
});
const count = Number(values.count);
const ttlSeconds = Number(values.ttl);
if (!values.org || !Number.isInteger(count) || count < 1 || count > 1000) {
  console.error("usage: issue-join-tokens --org <slug> [--count 1..1000] [--ttl seconds]");
  process.exit(2);
}
const db = createDbClient({ url: loadCliEnv().DATABASE_URL, maxConnections: 2 });
try {
  const org = await db.org.findUnique({ where: { slug: values.org } });
  if (!org) {
    console.error(
      `org '${values.org}' does not exist (seed it with 'pnpm --filter @thaw/db seed').`,
    );
    process.exit(2);
  }
  for (let i = 0; i < count; i++) {
    const { token } = await createJoinToken({
      actor: { type: "system", orgId: org.id },
      input: { ttlSeconds },
      db,
    });
    process.stdout.write(`${token}\n`);
  }
} finally {
  await db.$disconnect();
}
