import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { classifyStatus } from "./deliver-webhook.ts";
import { webhookMessageId } from "./record-webhook-event.ts";
import { newWebhookSecret, signWebhook } from "./webhook-secret.ts";
import { webhookUrlProblem } from "./webhook-url-policy.ts";

describe("webhook signing and delivery rules", () => {
  it("signs so that standardwebhooks verifies under each secret, space separated", () => {
    const [a, b] = [newWebhookSecret(), newWebhookSecret()];
    const body = JSON.stringify({ type: "endpoint.scaled", data: { desiredReplicas: 2 } });
    const at = new Date();
    const headers = {
      "webhook-id": "msg_1",
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": signWebhook([a, b], "msg_1", at, body),
    };
    expect(headers["webhook-signature"]).toMatch(/^v1,\S+ v1,\S+$/);
    for (const secret of [a, b]) expect(new Webhook(secret).verify(body, headers)).toBeTruthy();
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(a).verify(`${body} `, headers)).toThrow();
  });

  it.each([
    [200, "succeeded"],
    [204, "succeeded"],
    [301, "failed"],
    [400, "failed"],
    [404, "failed"],
    [408, "retry"],
    [429, "retry"],
    [500, "retry"],
    [503, "retry"],
  ] as const)("answers %i → %s", (status, verdict) => {
    expect(classifyStatus(status)).toBe(verdict);
  });

  it("names a message by its event, the same each time", () => {
    const id = webhookMessageId("cold_start.failed", "c1");
    expect(id).toMatch(/^msg_[\w-]{32}$/);
    expect(webhookMessageId("cold_start.failed", "c1")).toBe(id);
    expect(webhookMessageId("cold_start.slow", "c1")).not.toBe(id);
  });

  it("refuses non-public or plain-http URLs unless the operator trusts the host", () => {
    const none = new Set<string>();
    expect(webhookUrlProblem("https://hooks.example.com/x", none)).toBeNull();
    expect(webhookUrlProblem("https://[::1]/x", none)).toMatch(/loopback/);
    expect(webhookUrlProblem("https://169.254.169.254/", none)).toMatch(/link-local|loopback/);
    expect(webhookUrlProblem("https://127.0.0.1.nip.io/", none)).toMatch(/wildcard/);
    expect(webhookUrlProblem("http://hooks.example.com/x", none)).toMatch(/https/);
    expect(webhookUrlProblem("http://127.0.0.1:8080/x", new Set(["127.0.0.1:8080"]))).toBeNull();
  });
});
