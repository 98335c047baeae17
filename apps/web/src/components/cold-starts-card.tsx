"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { useTRPC } from "../trpc/client.tsx";
import { formatAge, formatSeconds as seconds } from "./format.ts";
import { QueryTable } from "./query-table.tsx";
import { ColdStartDetail } from "./cold-start-detail.tsx";
import { PredictedSeconds } from "./predicted-seconds.tsx";
import { useLiveColdStarts } from "./use-live-cold-starts.ts";

const COLUMNS = [
  "Endpoint",
  "Path",
  "Node",
  "Status",
  "Predicted mean (p10–p90)",
  "Actual",
  "Requested",
  "",
];

/**
 * Recent cold starts (of one endpoint when `endpointId` is given); one opens into its phase
 * waterfall and the decision behind it, or on its own page.
 */
export function ColdStartsCard({
  endpointId,
  limit = 15,
}: {
  endpointId?: string;
  limit?: number;
}) {
  const trpc = useTRPC();
  // Phases arrive live (server-sent events); the poll finds starts placed since, and covers
  // a stream that is down.
  useLiveColdStarts();
  const starts = useQuery(
    trpc.coldStarts.list.queryOptions(endpointId ? { endpointId, limit } : { limit }, {
      refetchInterval: 5_000,
    }),
  );
  const [open, setOpen] = useState<string | null>(null);

  return (
    <section className="card" aria-labelledby="cold-starts-title">
      <div className="card-head">
        <h2 id="cold-starts-title">Cold starts</h2>
      </div>
      <QueryTable
        testId="cold-starts-table"
        columns={COLUMNS}
        query={starts}
        noun="cold starts"
        empty={<>No cold starts yet — scale an endpoint up.</>}
      >
        {(rows) =>
          rows.map((c) => (
            <tr
              key={c.id}
              data-testid="cold-start-row"
              data-cold-start-id={c.id}
              data-endpoint={c.endpointSlug}
              data-status={c.status}
            >
              <td className="strong">
                <Link
                  href={`/cold-starts/${c.id}`}
                  aria-label={`Cold start of ${c.endpointSlug}, ${c.path}, ${c.status}`}
                >
                  {c.endpointSlug}
                </Link>
              </td>
              <td>
                <span className="path-tag">{c.path}</span>
                {c.explored && <span className="muted"> explored</span>}
                <div className="muted">{c.locality}</div>
              </td>
              <td>{c.nodeName ?? "—"}</td>
              <td>
                <span className={`status cold-${c.status}`}>{c.status}</span>
                {c.attempt > 1 && <div className="muted">attempt {c.attempt}</div>}
              </td>
              <td className="num">
                <PredictedSeconds start={c} />
              </td>
              <td className="num">{seconds(c.actualSeconds)}</td>
              <td>{formatAge((Date.now() - c.requestedAt.getTime()) / 1000)} ago</td>
              <td>
                <button
                  type="button"
                  className="button"
                  aria-expanded={open === c.id}
                  onClick={() => setOpen(open === c.id ? null : c.id)}
                >
                  {open === c.id ? "Close" : "Breakdown"}
                </button>
              </td>
            </tr>
          ))
        }
      </QueryTable>
      {open && <ColdStartDetail id={open} />}
    </section>
  );
}
