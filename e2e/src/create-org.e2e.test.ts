// org:create as an operator runs it: a real process against a real database, then a real
// sign-in through better-auth with the password it was given.
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "./web-server.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const PASSWORD = "first-owner-password";

describe("org:create", () => {
  let server: WebServer;

  const run = (args: string[], env: Record<string, string> = {}, input?: string) =>
    spawnSync(
      join(root, "node_modules", ".bin", "tsx"),
      ["apps/web/src/cli/create-org.ts", ...args],
      {
        cwd: root,
        encoding: "utf8",
        input: input ?? "",
        env: {
          NODE_ENV: "test",
          PATH: process.env.PATH ?? "",
          DATABASE_URL: server.database.url,
          ...env,
        },
        timeout: 60_000,
      },
    );

  beforeAll(async () => {
    server = await startWebServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("creates the org and its owner, who can then sign in and act as owner", async () => {
    const result = run(["--org", "acme", "--org-name", "Acme Inc", "--email", "Ops@Acme.test"], {
      THAW_OWNER_PASSWORD: PASSWORD,
    });
    expect(result.stderr).toContain("created: org acme, user ops@acme.test, owner");
    expect(result.status).toBe(0);
    const printed = JSON.parse(result.stdout) as { orgId: string; userId: string };

    const signIn = await fetch(`${server.baseUrl}/api/auth/sign-in/email`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.baseUrl },
      body: JSON.stringify({ email: "ops@acme.test", password: PASSWORD }),
    });
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    const me = await fetch(`${server.baseUrl}/api/trpc/me`, { headers: { cookie } });
    const body = (await me.json()) as {
      result: { data: { json: { org: { id: string; slug: string; role: string } } } };
    };
    expect(body.result.data.json.org).toMatchObject({
      id: printed.orgId,
      slug: "acme",
      role: "owner",
    });
    const audit = await server.database.db.auditLog.findMany({ where: { orgId: printed.orgId } });
    // The owner added, then the owner's sign-in (sign-ins are audited in the user's orgs).
    expect(audit.map((a) => a.action).sort()).toEqual(["auth.signed_in", "member.owner_added"]);
  });

  it("is idempotent, and takes the password on stdin as well", () => {
    const again = run(["--org", "acme", "--email", "ops@acme.test"], {}, `${PASSWORD}\n`);
    expect(again.status).toBe(0);
    expect(again.stderr).toContain("nothing to do");
  });

  it("refuses a user someone else may have registered first, unless --reset-password", async () => {
    const db = server.database.db;
    // An attacker registered the operator's address before org:create ran (account pre-hijack).
    const { hashPassword } = await import("better-auth/crypto");
    const user = await db.user.create({
      data: {
        id: crypto.randomUUID(),
        email: "ops@gamma.test",
        name: "Attacker",
        accounts: {
          create: {
            id: crypto.randomUUID(),
            accountId: "attacker",
            providerId: "credential",
            password: await hashPassword("attacker-password"),
          },
        },
        sessions: {
          create: {
            id: crypto.randomUUID(),
            token: "attacker-session",
            expiresAt: new Date(Date.now() + 86_400_000),
          },
        },
      },
    });
    const refused = run(["--org", "gamma", "--email", "ops@gamma.test"], {
      THAW_OWNER_PASSWORD: PASSWORD,
    });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain("--reset-password");
    expect(await db.membership.count({ where: { userId: user.id } })).toBe(0);
    expect(await db.org.count({ where: { slug: "gamma" } })).toBe(0);

    const reset = run(["--org", "gamma", "--email", "ops@gamma.test", "--reset-password"], {
      THAW_OWNER_PASSWORD: PASSWORD,
    });
    expect(reset.status, reset.stderr).toBe(0);
    expect(reset.stderr).toContain("(1 sessions ended)");
    expect(await db.session.count({ where: { userId: user.id } })).toBe(0);
    const { verifyPassword } = await import("better-auth/crypto");
    const credential = await db.account.findFirstOrThrow({
      where: { userId: user.id, providerId: "credential" },
    });
    expect(await verifyPassword({ hash: credential.password!, password: PASSWORD })).toBe(true);
    expect(
      await verifyPassword({ hash: credential.password!, password: "attacker-password" }),
    ).toBe(false);
    const membership = await db.membership.findFirstOrThrow({ where: { userId: user.id } });
    expect(membership.role).toBe("owner");
  });

  it("refuses a short password, a bad slug and a missing email, storing nothing", async () => {
    const db = server.database.db;
    const before = { orgs: await db.org.count(), users: await db.user.count() };
    const short = run(["--org", "beta", "--email", "b@beta.test"], {
      THAW_OWNER_PASSWORD: "short",
    });
    expect(short.status).toBe(2);
    expect(short.stderr).toContain("password: at least 10 characters");
    const slug = run(["--org", "Bad Slug!", "--email", "b@beta.test"], {
      THAW_OWNER_PASSWORD: PASSWORD,
    });
    expect(slug.status).toBe(2);
    expect(slug.stderr).toContain("input.orgSlug");
    const usage = run(["--org", "beta"]);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain("usage: org:create");
    expect({ orgs: await db.org.count(), users: await db.user.count() }).toEqual(before);
  });
});
