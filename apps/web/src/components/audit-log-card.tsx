"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc/client.tsx";
import { QueryTable } from "./query-table.tsx";

const COLUMNS = ["When", "Who", "Action", "Target", "Details"];
const FILTERS = [
  { label: "Everything", prefix: "" },
  { label: "Endpoints", prefix: "endpoint." },
  { label: "Deployments", prefix: "deployment." },
  { label: "API keys", prefix: "api_key." },
] as const;

/** Who did what, newest first, a page at a time. */
export function AuditLogCard() {
  const trpc = useTRPC();
  const [prefix, setPrefix] = useState("");
  const log = useInfiniteQuery(
    trpc.audit.list.infiniteQueryOptions(
      { limit: 50, ...(prefix ? { actionPrefix: prefix } : {}) },
      {
        getNextPageParam: (page) => page.nextCursor ?? undefined,
      },
    ),
  );
  const rows = log.data?.pages.flatMap((p) => p.entries);

  return (
    <section className="card" aria-labelledby="audit-title">
      <div className="card-head">
        <h2 id="audit-title">Audit log</h2>
        <label className="inline-field">
          Show{" "}
          <select value={prefix} onChange={(e) => setPrefix(e.target.value)}>
            {FILTERS.map((f) => (
              <option key={f.prefix} value={f.prefix}>
                {f.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <QueryTable
        testId="audit-table"
        columns={COLUMNS}
        query={{ ...log, data: rows }}
        noun="audit entries"
        empty={<>Nothing recorded yet.</>}
      >
        {(entries) =>
          entries.map((e) => (
            <tr key={e.id} data-testid="audit-row" data-action={e.action}>
              <td className="nowrap">
                <time dateTime={new Date(e.createdAt).toISOString()}>
                  {new Date(e.createdAt).toLocaleString()}
                </time>
              </td>
              <td>{e.actorName}</td>
              <td className="mono">{e.action}</td>
              <td>
                {e.targetType}
                {e.targetId && <div className="muted mono truncate">{e.targetId}</div>}
              </td>
              <td className="mono small">{JSON.stringify(e.metadata)}</td>
            </tr>
          ))
        }
      </QueryTable>
      {log.hasNextPage && (
        <button
          type="button"
          className="button"
          disabled={log.isFetchingNextPage}
          onClick={() => void log.fetchNextPage()}
        >
          {log.isFetchingNextPage ? "Loading…" : "Older entries"}
        </button>
      )}
    </section>
  );
}
