import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";

// A real OTLP/HTTP receiver for the trace-export tests: otlp-receiver.py decodes what the
// exporter sends with the OpenTelemetry project's generated protobuf classes (not with the
// JS SDK's own serializer), so a span the backend could not read fails the test.

/** A decoded span, in protobuf's JSON mapping (ids base64, times as nanosecond strings). */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
  status?: { code?: string; message?: string };
}

export interface OtlpReceiver {
  /** The base URL to give as OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  /** Every span received so far, with its resource's service.name. */
  spans(): { service: string; span: ReceivedSpan }[];
  /** Headers of the last export request. */
  lastHeaders(): Record<string, string> | null;
  stop(): Promise<void>;
}

interface ExportLine {
  headers: Record<string, string>;
  request: {
    resourceSpans?: {
      resource?: { attributes?: { key: string; value: { stringValue?: string } }[] };
      scopeSpans?: { spans?: ReceivedSpan[] }[];
    }[];
  };
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const python = process.env.THAW_OTLP_PYTHON;
  if (!python)
    throw new Error(
      "THAW_OTLP_PYTHON is not set: run 'bash infra/dev/test.sh' (or source infra/dev/lib.sh and run ensure_otlp_proto) to install opentelemetry-proto into .data/otlp-proto.",
    );
  const child = spawn(python, [path.join(import.meta.dirname, "otlp-receiver.py")], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines = createInterface({ input: child.stdout });
  const received: ExportLine[] = [];
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`otlp-receiver.py exited ${code}: ${stderr}`)));
    lines.once("line", (line) => {
      const match = /^listening (\d+)$/.exec(line);
      if (match) resolve(Number(match[1]));
      else reject(new Error(`otlp-receiver.py said: ${line}`));
    });
  });
  lines.on("line", (line) => received.push(JSON.parse(line) as ExportLine));
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () =>
      received.flatMap(({ request }) =>
        (request.resourceSpans ?? []).flatMap((rs) => {
          const service =
            rs.resource?.attributes?.find((a) => a.key === "service.name")?.value.stringValue ?? "";
          return (rs.scopeSpans ?? []).flatMap((ss) =>
            (ss.spans ?? []).map((span) => ({ service, span })),
          );
        }),
      ),
    lastHeaders: () => received.at(-1)?.headers ?? null,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** A span attribute's value, whatever its OTLP type. */
export function spanAttribute(
  span: ReceivedSpan,
  key: string,
): string | number | boolean | undefined {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  if (!value) return undefined;
  if ("stringValue" in value) return value.stringValue as string;
  if ("intValue" in value) return Number(value.intValue);
  if ("doubleValue" in value) return value.doubleValue as number;
  if ("boolValue" in value) return value.boolValue as boolean;
  return undefined;
}

/** An id from protobuf's JSON mapping (base64) as the hex a traceparent carries. */
export function hexId(base64: string): string {
  return Buffer.from(base64, "base64").toString("hex");
}
