import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type SpanContext,
} from "@opentelemetry/api";
import { parseTraceParent } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import type { PlannedSpan, TraceAttributes } from "./cold-start-trace.ts";

// Planned spans out over OTLP/HTTP (protobuf) with the OpenTelemetry SDK, in batches, to
// OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces, as the OTLP spec builds a signal's URL).
// The endpoint is the operator's setting; nothing a tenant sends picks where spans go.

export interface OtlpTracingOptions {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL. */
  endpoint: string;
  /** OTEL_EXPORTER_OTLP_HEADERS (e.g. an API key for a hosted backend). */
  headers?: Record<string, string>;
  serviceName: string;
  serviceVersion?: string;
}

/** A span context as the W3C traceparent header writes it (version 00). */
export function formatTraceparent(context: SpanContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.traceFlags.toString(16).padStart(2, "0")}`;
}

/** A client's traceparent header, normalised, or null when it is not a valid W3C one. */
export function validTraceparent(header: string | null | undefined): string | null {
  const context = header ? parseTraceParent(header.trim()) : null;
  return context ? formatTraceparent(context) : null;
}

/** "k1=v1,k2=v2" (OTEL_EXPORTER_OTLP_HEADERS, values URL-encoded) → a header record. */
export function parseOtlpHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(
      pair.slice(at + 1).trim(),
    );
  }
  return headers;
}

export class OtlpTraceExport {
  private readonly provider: TracerProvider;

  constructor(options: OtlpTracingOptions) {
    const exporter = new OTLPTraceExporter({
      url: `${options.endpoint.replace(/\/+$/, "")}/v1/traces`,
      ...(options.headers ? { headers: options.headers } : {}),
    });
    this.provider = new TracerProvider({
      resource: resourceFromAttributes({
        "service.name": options.serviceName,
        ...(options.serviceVersion ? { "service.version": options.serviceVersion } : {}),
      }),
      spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: 1_000 })],
    });
  }

  /**
   * Records the planned spans (root first) as one trace: under `traceparent`'s span when
   * given (a valid W3C traceparent), else as a new trace.
   */
  record(spans: readonly PlannedSpan[], traceparent: string | null): void {
    const tracer = this.provider.getTracer("thaw");
    const parentContext = traceparent ? parseTraceParent(traceparent) : null;
    const rootContext: Context = parentContext
      ? trace.setSpanContext(ROOT_CONTEXT, parentContext)
      : ROOT_CONTEXT;
    const started = new Map<string, Span>();
    for (const planned of spans) {
      const parent = planned.parent ? started.get(planned.parent) : undefined;
      if (planned.parent && !parent)
        throw new Error(`span ${planned.key}: parent ${planned.parent} not planned before it`);
      const span = tracer.startSpan(
        planned.name,
        { startTime: planned.start, attributes: planned.attributes, kind: SpanKind.INTERNAL },
        parent ? trace.setSpan(ROOT_CONTEXT, parent) : rootContext,
      );
      if (planned.error) span.setStatus({ code: SpanStatusCode.ERROR, message: planned.error });
      started.set(planned.key, span);
    }
    // Children end before their parents, as they would have live.
    for (const planned of [...spans].reverse()) started.get(planned.key)!.end(planned.end);
  }

  /**
   * A span for work under way (an API call), under `traceparent`'s span when that is a valid
   * W3C traceparent: its own traceparent is known at once, to hand to what the work causes.
   */
  startLive(
    name: string,
    traceparent: string | null,
    attributes: TraceAttributes,
  ): { traceparent: string; end(attributes: TraceAttributes, error?: string): void } {
    const parentContext = traceparent ? parseTraceParent(traceparent) : null;
    const span = this.provider
      .getTracer("thaw")
      .startSpan(
        name,
        { attributes, kind: SpanKind.SERVER },
        parentContext ? trace.setSpanContext(ROOT_CONTEXT, parentContext) : ROOT_CONTEXT,
      );
    return {
      traceparent: formatTraceparent(span.spanContext()),
      end: (more, error) => {
        span.setAttributes(more);
        if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
        span.end();
      },
    };
  }

  /** Sends what is buffered now (tests; shutdown). */
  flush(): Promise<void> {
    return this.provider.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }
}
