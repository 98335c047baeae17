import { createJoinToken } from "@thaw/core";
import { G5_XLARGE_JOIN_FIGURES } from "@thaw/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "../web-server.ts";
import { restClient } from "../rest/rest-client.ts";

// Per-address limits key on the address the connection came from (issue 23, finding 11):
// a fresh X-Forwarded-For per request used to give each request a fresh budget. Agent joins
// spend the same per-address allowance (THAW_API_RATE_LIMIT_PER_ADDRESS_PER_MINUTE), counted
// apart from REST, before the join token is looked up.

const PER_ADDRESS = 8;

describe("per-address limits", () => {
  let server: WebServer;

  beforeAll(async () => {
    server = await startWebServer({
      env: { THAW_API_RATE_LIMIT_PER_ADDRESS_PER_MINUTE: String(PER_ADDRESS) },
    });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("counts guessed keys against the address, whatever X-Forwarded-For says", async () => {
    const call = restClient(server.baseUrl);
    const statuses: number[] = [];
    for (let i = 0; i < PER_ADDRESS + 2; i++)
      statuses.push(
        (
          await call("GET", "/api/v1/endpoints", {
            key: `thaw_000000000000_guess${String(i).padStart(24, "0")}`,
            headers: { "x-forwarded-for": `203.0.113.${i}` },
          })
        ).status,
      );
    expect(statuses.slice(0, PER_ADDRESS)).toEqual(Array<number>(PER_ADDRESS).fill(401));
    expect(statuses.slice(PER_ADDRESS)).toEqual([429, 429]);
  });

  it("refuses joins past the address's budget with 429 before looking at the token, a valid one included", async () => {
    const db = server.database.db;
    const valid = (
      await createJoinToken({
        actor: { type: "system", orgId: server.orgId },
        input: { ttlSeconds: 600 },
        db,
      })
    ).token;
    const join = (joinToken: string, i: number) =>
      fetch(`${server.baseUrl}/api/agent/v1/join`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": `203.0.113.${i}` },
        body: JSON.stringify({
          joinToken,
          name: `guess-${i}`,
          provider: "sim",
          runtime: "sim",
          agentVersion: "probe",
          agentUrl: "https://127.0.0.1:7070/hosts/guess",
          agentCertSha256: "5".repeat(64),
          figures: G5_XLARGE_JOIN_FIGURES,
        }),
      });
    // Well-formed tokens that do not exist: each is looked up and refused, until the budget
    // is spent; from then on the answer is 429 whatever the token.
    const guess = (i: number) => `${valid.slice(0, -8)}${String(i).padStart(8, "0")}`;
    const answers: { status: number; retryAfter: string | null; code?: string }[] = [];
    for (let i = 0; i < PER_ADDRESS + 2; i++) {
      const response = await join(guess(i), i);
      const body = (await response.json()) as { error?: { code?: string } };
      answers.push({
        status: response.status,
        retryAfter: response.headers.get("retry-after"),
        code: body.error?.code,
      });
    }
    expect(answers.slice(0, PER_ADDRESS).map((a) => a.status)).toEqual(
      Array<number>(PER_ADDRESS).fill(401),
    );
    for (const refused of answers.slice(PER_ADDRESS)) {
      expect(refused).toMatchObject({ status: 429, code: "RATE_LIMITED" });
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);
    }
    // The real token is refused the same way, and is not looked at: still unspent, no node.
    const withValid = await join(valid, PER_ADDRESS + 2);
    expect(withValid.status).toBe(429);
    expect(withValid.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/);
    expect(await db.joinToken.count({ where: { usedAt: null } })).toBe(1);
    expect(await db.node.count()).toBe(0);
  });
});
