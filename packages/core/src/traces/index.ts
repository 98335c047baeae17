export {
  coldStartTraceSpans,
  type ColdStartTraceInput,
  type PlannedSpan,
  type TraceAttributes,
} from "./cold-start-trace.ts";
export { loadColdStartTrace, type LoadedColdStartTrace } from "./load-cold-start-trace.ts";
export {
  formatTraceparent,
  OtlpTraceExport,
  parseOtlpHeaders,
  validTraceparent,
  type OtlpTracingOptions,
} from "./otlp-trace-exporter.ts";
