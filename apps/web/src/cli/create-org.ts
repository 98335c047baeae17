// Creates the first org and its owner on a new installation (signing up in the browser
// makes a user with no org). Usage:
//   THAW_OWNER_PASSWORD=… pnpm --silent org:create --org acme --org-name "Acme" --email ops@acme.com
//   echo "$PASSWORD" | pnpm --silent org:create --org acme --org-name Acme --email ops@acme.com
// Idempotent. A user who already exists and is not yet the org's owner is refused unless
// --reset-password (their password becomes the one given, their sessions end): the address may
// have been registered by someone else first. Prints {"orgId","userId","created"} on stdout.
import { text } from "node:stream/consumers";
import { parseArgs } from "node:util";
import { createOrgWithOwner, isAppError } from "@thaw/core";
import { createDbClient } from "@thaw/db";
import { hashPassword } from "better-auth/crypto";
import { loadCliEnv } from "./cli-env.ts";

const MIN_PASSWORD_LENGTH = 10; // as the sign-in server's emailAndPassword.minPasswordLength

const { values } = parseArgs({
  options: {
    org: { type: "string" },
    "org-name": { type: "string" },
    email: { type: "string" },
    name: { type: "string" },
    "reset-password": { type: "boolean" },
  },
});
if (!values.org || !values.email) {
  console.error(
    "usage: org:create --org <slug> [--org-name <name>] --email <owner email> [--name <owner name>] [--reset-password]\n" +
      "       the password comes from THAW_OWNER_PASSWORD or standard input",
  );
  process.exit(2);
}
const env = loadCliEnv();

async function readPassword(): Promise<string> {
  const password =
    env.THAW_OWNER_PASSWORD ??
    (process.stdin.isTTY ? "" : (await text(process.stdin)).split("\n")[0]!);
  if (password.length < MIN_PASSWORD_LENGTH) {
    console.error(
      `password: at least ${MIN_PASSWORD_LENGTH} characters (set THAW_OWNER_PASSWORD or pipe it on stdin).`,
    );
    process.exit(2);
  }
  return hashPassword(password);
}

const db = createDbClient({ url: env.DATABASE_URL, maxConnections: 2 });
try {
  const result = await createOrgWithOwner({
    input: {
      orgSlug: values.org,
      orgName: values["org-name"] ?? values.org,
      email: values.email,
      ...(values.name ? { name: values.name } : {}),
    },
    passwordHash: readPassword,
    resetPassword: values["reset-password"] ?? false,
    db,
  });
  console.error(
    result.created.length
      ? `created: ${result.created.join(", ")}`
      : "nothing to do: already an owner",
  );
  process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (error) {
  if (!isAppError(error)) throw error;
  console.error(`org:create: ${error.message}`);
  process.exitCode = 2;
} finally {
  await db.$disconnect();
}
