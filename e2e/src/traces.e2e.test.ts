import { hexId, spanAttribute, startOtlpReceiver, type OtlpReceiver } from "@thaw/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiKey, restClient } from "./rest/rest-client.ts";
import { startWebServer, type WebServer } from "./web-server.ts";

// REST calls as OpenTelemetry server spans, through the built server, received by an OTLP
// receiver decoding with the OpenTelemetry project's protobuf classes: a scale call joins
// its caller's trace, and the scale event keeps the call's own span as the parent of the
// cold starts it causes (the scheduler's side: apps/scheduler/src/tracing).

const TRACE_ID = "5b8efff798038103d269b633813fc60c";
const CALLER_SPAN = "eee19b7ec3c1b174";
const SLUG = "llama-3-2-1b-gguf";
const ROUTE = "/api/v1/endpoints/{endpoint}/replicas";

describe("REST calls as trace spans", () => {
  let receiver: OtlpReceiver;
  let server: WebServer;
  let call: ReturnType<typeof restClient>;

  const newestScaleEvent = () =>
    server.database.db.scaleEvent.findFirstOrThrow({ orderBy: { createdAt: "desc" } });
  const scaleTo = (replicas: number, headers: Record<string, string>) =>
    call("PUT", `/api/v1/endpoints/${SLUG}/replicas`, { body: { replicas }, headers });

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    server = await startWebServer({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_SERVICE_NAME: "thaw-web-e2e" },
    });
    call = restClient(
      server.baseUrl,
      await newApiKey(server.database.db, server.orgId, ["endpoints:read", "endpoints:scale"]),
    );
  });
  afterAll(async () => {
    await server?.stop();
    await receiver?.stop();
  });

  it("records a scale call as a server span under the caller's, and hands that span on", async () => {
    const answer = await scaleTo(2, { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` });
    expect(answer.status).toBe(200);
    const ofTrace = () => receiver.spans().filter((s) => hexId(s.span.traceId) === TRACE_ID);
    await expect.poll(() => ofTrace().length, { timeout: 15_000 }).toBe(1);
    const { service, span } = ofTrace()[0]!;
    expect(service).toBe("thaw-web-e2e");
    expect(span.name).toBe(`PUT ${ROUTE}`);
    expect(hexId(span.parentSpanId!)).toBe(CALLER_SPAN);
    expect(spanAttribute(span, "http.route")).toBe(ROUTE);
    expect(spanAttribute(span, "http.response.status_code")).toBe(200);
    // The scheduler's cold-start traces hang under this span.
    expect((await newestScaleEvent()).traceparent).toBe(`00-${TRACE_ID}-${hexId(span.spanId)}-01`);
  });

  it("starts a new trace for a call without a valid traceparent, and still hands its span on", async () => {
    const before = new Set(receiver.spans().map((s) => s.span.spanId));
    expect((await scaleTo(1, { traceparent: "00-not-a-trace-parent-01" })).status).toBe(200);
    await expect
      .poll(() => receiver.spans().filter((s) => !before.has(s.span.spanId)).length, {
        timeout: 15_000,
      })
      .toBe(1);
    const span = receiver.spans().find((s) => !before.has(s.span.spanId))!.span;
    expect(span.parentSpanId ?? "").toBe("");
    expect((await newestScaleEvent()).traceparent).toBe(
      `00-${hexId(span.traceId)}-${hexId(span.spanId)}-01`,
    );
  });
});
