import { seedDemo } from "@thaw/db/seed";
import { createTestDatabase, type TestDatabase } from "@thaw/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authenticateApiKey } from "./authenticate-api-key.ts";
import { createApiKey } from "./create-api-key.ts";

// Every REST call's key check: the key's actor for a valid key, one answer for every key
// that is not (unknown, revoked, expired, malformed), and lastUsedAt as a once-a-minute hint
// that only a valid key moves.

describe("authenticateApiKey", () => {
  let t: TestDatabase;
  let orgId: string;

  beforeAll(async () => {
    t = await createTestDatabase();
    ({ orgId } = await seedDemo(t.db));
  });
  afterAll(async () => {
    await t.drop();
  });

  const newKey = async (name: string) =>
    createApiKey({
      actor: { type: "system", orgId },
      input: { name, scopes: ["endpoints:read", "endpoints:scale"], expiresInDays: 1 },
      db: t.db,
    });
  const lastUsedAt = async (id: string) =>
    (await t.db.apiKey.findUniqueOrThrow({ where: { id } })).lastUsedAt;

  it("answers the key's actor and stamps its use at most once a minute", async () => {
    const key = await newKey("stamped");
    const now = new Date();
    const actor = await authenticateApiKey({ key: key.secret, db: t.db, now });
    expect(actor).toEqual({
      type: "api_key",
      apiKeyId: key.id,
      orgId,
      scopes: ["endpoints:read", "endpoints:scale"],
    });
    expect(await lastUsedAt(key.id)).toEqual(now);
    const soon = new Date(now.getTime() + 59_000);
    await authenticateApiKey({ key: key.secret, db: t.db, now: soon });
    expect(await lastUsedAt(key.id)).toEqual(now);
    const later = new Date(now.getTime() + 61_000);
    await authenticateApiKey({ key: key.secret, db: t.db, now: later });
    expect(await lastUsedAt(key.id)).toEqual(later);
  });

  it("stamps once for many calls at once with a stale stamp", async () => {
    const key = await newKey("together");
    const now = new Date();
    await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        authenticateApiKey({ key: key.secret, db: t.db, now: new Date(now.getTime() + i) }),
      ),
    );
    const stamp = await lastUsedAt(key.id);
    expect(stamp!.getTime() - now.getTime()).toBeGreaterThanOrEqual(0);
    expect(stamp!.getTime() - now.getTime()).toBeLessThan(4);
  });

  it("refuses unknown, revoked, expired and malformed keys alike, stamping none", async () => {
    const revoked = await newKey("revoked");
    await t.db.apiKey.update({ where: { id: revoked.id }, data: { revokedAt: new Date() } });
    const expired = await newKey("expired");
    const refusal = {
      code: "UNAUTHENTICATED",
      message: expect.stringContaining("Bearer thaw_") as unknown,
    };
    await expect(authenticateApiKey({ key: revoked.secret, db: t.db })).rejects.toMatchObject(
      refusal,
    );
    await expect(
      authenticateApiKey({
        key: expired.secret,
        db: t.db,
        now: new Date(Date.now() + 2 * 86_400_000),
      }),
    ).rejects.toMatchObject(refusal);
    await expect(
      authenticateApiKey({ key: `${revoked.secret.slice(0, -4)}AAAA`, db: t.db }),
    ).rejects.toMatchObject(refusal);
    await expect(authenticateApiKey({ key: "not a key", db: t.db })).rejects.toMatchObject(refusal);
    await expect(authenticateApiKey({ key: null, db: t.db })).rejects.toMatchObject(refusal);
    expect(await lastUsedAt(revoked.id)).toBeNull();
    expect(await lastUsedAt(expired.id)).toBeNull();
  });
});
