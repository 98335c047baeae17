import { OtlpTraceExport, parseOtlpHeaders, validTraceparent } from "@thaw/core/traces";
import { env } from "../../env.ts";

// The trace context of a REST call. With OTEL_EXPORTER_OTLP_ENDPOINT set, each call is a
// server span (under the caller's `traceparent` header when it sends a valid one) and the
// cold starts it causes are exported by the scheduler as that span's children. Without it,
// the caller's own context is passed on as it came, so an autoscaler's traces still hold the
// starts it asked for.

export interface ApiCallTrace {
  /** What the call hands on (a ScaleEvent keeps it): its span's context, or the caller's. */
  traceparent: string | null;
  end(status: number): void;
}

const holder = globalThis as typeof globalThis & { __thawApiTracing?: OtlpTraceExport | null };

function tracing(): OtlpTraceExport | null {
  if (holder.__thawApiTracing !== undefined) return holder.__thawApiTracing;
  const { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_HEADERS: headers } = env();
  holder.__thawApiTracing = endpoint
    ? new OtlpTraceExport({
        endpoint,
        headers: parseOtlpHeaders(headers),
        serviceName: env().OTEL_SERVICE_NAME,
      })
    : null;
  return holder.__thawApiTracing;
}

export function beginApiCallTrace(request: Request, route: string): ApiCallTrace {
  const callerContext = validTraceparent(request.headers.get("traceparent"));
  const exporter = tracing();
  if (!exporter) return { traceparent: callerContext, end: () => undefined };
  const span = exporter.startLive(`${request.method} ${route}`, callerContext, {
    "http.request.method": request.method,
    "http.route": route,
  });
  return {
    traceparent: span.traceparent,
    end: (status) =>
      span.end(
        { "http.response.status_code": status },
        status >= 500 ? `answered ${status}` : undefined,
      ),
  };
}
