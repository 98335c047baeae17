import { coldStartTraceSpans, loadColdStartTrace, type OtlpTraceExport } from "@thaw/core/traces";
import type { DbClient } from "@thaw/db";
import type { Logger } from "../logger.ts";

// Each closed cold start as one OpenTelemetry trace (OTEL_EXPORTER_OTLP_ENDPOINT): the history
// worker closes it exactly once, and this exports it then, from what Postgres recorded, under
// the trace context of the API call that asked for the replica (core traces/cold-start-trace.ts).

export class ColdStartTraces {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly db: DbClient,
    private readonly exporter: OtlpTraceExport,
    private readonly log: Logger,
  ) {}

  /** Never throws: a trace that cannot be exported is logged, and nothing else waits on it. */
  export(coldStartId: string): Promise<void> {
    const work = this.exportOne(coldStartId).finally(() => this.pending.delete(work));
    this.pending.add(work);
    return work;
  }

  private async exportOne(coldStartId: string): Promise<void> {
    try {
      const loaded = await loadColdStartTrace({ db: this.db, coldStartId });
      if (loaded) this.exporter.record(coldStartTraceSpans(loaded.input), loaded.traceparent);
    } catch (error) {
      this.log.warn(
        { coldStartId, err: error instanceof Error ? error.message : String(error) },
        "cold-start trace not exported",
      );
    }
  }

  /** After the workers stopped: the reads under way finish, then the buffered spans are sent. */
  async shutdown(): Promise<void> {
    await Promise.all(this.pending);
    await this.exporter.shutdown();
  }
}
