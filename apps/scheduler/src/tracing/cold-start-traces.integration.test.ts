import { setDesiredReplicas } from "@thaw/core";
import { hexId, spanAttribute, startOtlpReceiver, type OtlpReceiver } from "@thaw/core/testing";
import { useTestDatabase } from "@thaw/db/testing";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { enqueue } from "../queues.ts";
import { startScheduler, type RunningScheduler } from "../scheduler.ts";
import {
  type SchedulerTestStack,
  schedulerTestEnv,
  startSchedulerTestStack,
} from "../testing/scheduler-test-stack.ts";

// A scale-up's cold start as a trace, end to end: a scale call carrying the caller's W3C
// trace context, the running scheduler placing and dispatching it to a real sim agent, and
// the trace arriving at an OTLP receiver that decodes it with the OpenTelemetry project's
// protobuf classes — under the caller's span, with the times and phases Postgres recorded.

const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const CALLER_SPAN = "b7ad6b7169203331";
const silent = pino({ level: "silent" });

describe("cold-start traces over OTLP", () => {
  const testDb = useTestDatabase();
  const prefix = `test-traces-${Date.now()}`;
  let stack: SchedulerTestStack;
  let scheduler: RunningScheduler;
  let receiver: OtlpReceiver;

  const db = () => testDb.current.db;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    stack = await startSchedulerTestStack({
      db: db(),
      prefix,
      hosts: 1,
      agentPrefix: "tr",
      agentEnv: { THAW_SIM_TIME_FACTOR: "2000" },
    });
    scheduler = await startScheduler(
      schedulerTestEnv({
        databaseUrl: testDb.current.url,
        prefix,
        extra: {
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          OTEL_EXPORTER_OTLP_HEADERS: "x-collector-key=test-key",
        },
      }),
      silent,
      { sweepMs: 1_000 },
    );
  }, 120_000);

  afterAll(async () => {
    await scheduler?.stop();
    await stack?.close();
    await receiver?.stop();
  });

  it("exports the start under the scale call's trace, from request to ready, phase by phase", async () => {
    await setDesiredReplicas({
      actor: { type: "system", orgId: stack.orgId },
      endpoint: stack.endpointId,
      input: { replicas: 1 },
      source: "api",
      traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01`,
      db: db(),
    });
    await enqueue(stack.queues, "reconcile", { endpointId: stack.endpointId });
    const closed = { endpointId: stack.endpointId, closedHandledAt: { not: null } };
    await expect.poll(() => db().coldStart.count({ where: closed }), { timeout: 45_000 }).toBe(1);
    const start = await db().coldStart.findFirstOrThrow({
      where: closed,
      include: { phases: { orderBy: { sequence: "asc" } }, replica: true },
    });
    expect(start.status).toBe("succeeded");
    const ofTrace = () => receiver.spans().filter((s) => hexId(s.span.traceId) === TRACE_ID);
    // Root, reconcile, place, dispatch, the agent's start, and one per phase.
    await expect.poll(() => ofTrace().length, { timeout: 10_000 }).toBe(5 + start.phases.length);
    const spans = ofTrace().map((s) => s.span);
    expect(new Set(ofTrace().map((s) => s.service))).toEqual(new Set(["thaw-scheduler"]));
    expect(receiver.lastHeaders()).toMatchObject({ "x-collector-key": "test-key" });

    const root = spans.find((s) => s.name === "thaw.cold_start")!;
    expect(hexId(root.parentSpanId!)).toBe(CALLER_SPAN);
    expect(spanAttribute(root, "thaw.cold_start.id")).toBe(start.id);
    expect(spanAttribute(root, "thaw.path")).toBe(start.path);
    expect(spanAttribute(root, "thaw.outcome")).toBe("succeeded");
    expect(spanAttribute(root, "thaw.predicted.mean_seconds")).toBeCloseTo(
      start.predictedMeanSeconds!,
      9,
    );

    // The control plane's stages, timed by what Postgres recorded.
    const scaleEvent = await db().scaleEvent.findUniqueOrThrow({
      where: { id: start.replica.scaleEventId! },
    });
    expect(scaleEvent.traceparent).toBe(`00-${TRACE_ID}-${CALLER_SPAN}-01`);
    const ms = (nanos: string) => Number(BigInt(nanos) / 1_000_000n);
    const named = (name: string) => spans.find((s) => s.name === name)!;
    expect(ms(named("thaw.reconcile").startTimeUnixNano)).toBe(scaleEvent.createdAt.getTime());
    expect(ms(named("thaw.reconcile").endTimeUnixNano)).toBe(start.replica.createdAt.getTime());
    expect(ms(named("thaw.place").endTimeUnixNano)).toBe(start.requestedAt.getTime());
    expect(ms(named("thaw.dispatch").endTimeUnixNano)).toBe(start.dispatchedAt!.getTime());
    for (const stage of ["thaw.reconcile", "thaw.place", "thaw.dispatch", "thaw.agent_start"])
      expect(named(stage).parentSpanId, stage).toBe(root.spanId);

    // Each phase the agent reported, under the agent's span, with its simulated seconds.
    const agent = named("thaw.agent_start");
    const phaseSpans = spans.filter((s) => s.parentSpanId === agent.spanId);
    expect(phaseSpans.map((s) => s.name).sort()).toEqual(start.phases.map((p) => p.phase).sort());
    for (const phase of start.phases) {
      const span = phaseSpans.find((s) => s.name === phase.phase)!;
      expect(spanAttribute(span, "thaw.phase.seconds")).toBeCloseTo(phase.seconds!, 9);
      expect(spanAttribute(span, "thaw.simulated")).toBe(true);
    }
  });
});
