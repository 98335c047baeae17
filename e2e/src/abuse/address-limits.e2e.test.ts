import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebServer, type WebServer } from "../web-server.ts";
import { restClient } from "../rest/rest-client.ts";

// Per-address limits key on the address the connection came from (issue 23, finding 11):
// a fresh X-Forwarded-For per request used to give each request a fresh budget.

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
});
