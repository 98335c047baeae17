"use client";

import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc/client.tsx";
import { formatAge } from "./format.ts";
import { QueryTable } from "./query-table.tsx";

const COLUMNS = ["State", "Severity", "Endpoint", "Rule", "What fired", "Opened", "Resolved"];
const age = (iso: string) => `${formatAge((Date.now() - Date.parse(iso)) / 1000)} ago`;

/** Alert episodes, newest first: firing ones on top of the page, each with what fired it. */
export function AlertEpisodesCard() {
  const trpc = useTRPC();
  const [state, setState] = useState<"open" | "all">("all");
  const episodes = useQuery({
    ...trpc.alerts.episodes.queryOptions({ state, limit: 50 }),
    refetchInterval: 15_000,
  });
  return (
    <section className="card" aria-labelledby="alert-episodes-title">
      <div className="card-head">
        <h2 id="alert-episodes-title">Alerts</h2>
        <label className="small">
          Show{" "}
          <select
            name="episode-state"
            value={state}
            onChange={(e) => setState(e.target.value as "open" | "all")}
          >
            <option value="all">firing and resolved</option>
            <option value="open">firing only</option>
          </select>
        </label>
      </div>
      <QueryTable
        testId="alert-episodes-table"
        columns={COLUMNS}
        query={{ ...episodes, data: episodes.data?.episodes }}
        noun="alerts"
        empty={<>Nothing has fired{state === "open" ? " that is still firing" : ""}.</>}
      >
        {(rows) =>
          rows.map((e) => (
            <tr key={e.id} data-testid="alert-episode-row">
              <td>
                <span className={`badge ${e.resolvedAt ? "" : "status-failed"}`}>
                  {e.resolvedAt ? "resolved" : "firing"}
                </span>
              </td>
              <td>{e.severity}</td>
              <td className="mono">{e.endpoint.slug}</td>
              <td>{e.rule.name}</td>
              <td className="small" data-testid="alert-summary">
                {e.summary}
              </td>
              <td>{age(e.openedAt)}</td>
              <td>{e.resolvedAt ? age(e.resolvedAt) : "—"}</td>
            </tr>
          ))
        }
      </QueryTable>
    </section>
  );
}
