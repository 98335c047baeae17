"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc/client.tsx";
import { formatAge } from "./format.ts";
import { JoinTokenButton } from "./join-token-button.tsx";
import { errorMessage, StateRow } from "./query-state.tsx";

const COLUMNS = ["Node", "Instance type", "GPU model", "GPUs used / total", "State", "Heartbeat"];

export function FleetTable({ canCreateJoinToken }: { canCreateJoinToken: boolean }) {
  const trpc = useTRPC();
  const nodes = useQuery(trpc.fleet.nodes.queryOptions(undefined, { refetchInterval: 2_000 }));

  return (
    <section className="card" aria-labelledby="fleet-title">
      <div className="card-head">
        <h2 id="fleet-title">Fleet</h2>
        {canCreateJoinToken && <JoinTokenButton />}
      </div>
      <div className="table-scroll">
        <table data-testid="fleet-table">
          <thead>
            <tr>
              {COLUMNS.map((c) => (
                <th key={c} scope="col">
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {nodes.isPending && (
              <StateRow colSpan={COLUMNS.length} kind="loading">
                Loading nodes…
              </StateRow>
            )}
            {nodes.isError && (
              <StateRow colSpan={COLUMNS.length} kind="error">
                Could not load nodes: {errorMessage(nodes.error)}
              </StateRow>
            )}
            {nodes.data?.length === 0 && (
              <StateRow colSpan={COLUMNS.length} kind="empty">
                No nodes yet — start an agent with a join token.
              </StateRow>
            )}
            {nodes.data?.map((n) => (
              <tr
                key={n.id}
                data-testid="fleet-row"
                data-node-name={n.name}
                data-state={n.state}
                data-stale={n.stale}
              >
                <td>
                  <div className="strong">{n.name}</div>
                  <div className="muted">
                    {n.provider} · {n.runtime}
                    {n.zone ? ` · ${n.zone}` : ""}
                  </div>
                </td>
                <td className="mono">{n.instanceType}</td>
                <td>{n.gpuModel}</td>
                <td className="num">
                  {n.gpusUsed} / {n.gpuCount}
                </td>
                <td>
                  <span className={`status state-${n.state}`}>{n.state}</span>
                  {n.stale && <span className="status stale">stale</span>}
                </td>
                <td
                  className="num"
                  data-testid="heartbeat-age"
                  data-seconds={
                    n.heartbeatAgeSeconds == null ? "" : Math.round(n.heartbeatAgeSeconds)
                  }
                >
                  {n.heartbeatAgeSeconds == null
                    ? "never"
                    : `${formatAge(n.heartbeatAgeSeconds)} ago`}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
