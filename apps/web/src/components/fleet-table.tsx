"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc/client.tsx";
import { formatAge, formatGB } from "./format.ts";
import { JoinTokenButton } from "./join-token-button.tsx";
import { NodeActions } from "./node-actions.tsx";
import { QueryTable } from "./query-table.tsx";

const COLUMNS = [
  "Node",
  "Instance type",
  "GPU model",
  "GPUs used / total",
  "Holds",
  "State",
  "Heartbeat",
];

/** Where a node's disk figure came from (core's effectiveDiskFigures). */
const DISK_SOURCE = {
  measured: "measured",
  provisioned: "provisioned gp3",
  profile: "instance profile",
} as const;

/** Nodes, and for admins (fleet:write, the same as creating join tokens) what to do with each. */
export function FleetTable({ canCreateJoinToken }: { canCreateJoinToken: boolean }) {
  const trpc = useTRPC();
  const columns = canCreateJoinToken ? [...COLUMNS, "Actions"] : COLUMNS;
  const nodes = useQuery(trpc.fleet.nodes.queryOptions(undefined, { refetchInterval: 2_000 }));

  return (
    <section className="card" aria-labelledby="fleet-title">
      <div className="card-head">
        <h2 id="fleet-title">Fleet</h2>
        {canCreateJoinToken && <JoinTokenButton />}
      </div>
      <QueryTable
        testId="fleet-table"
        columns={columns}
        query={nodes}
        noun="nodes"
        empty={<>No nodes yet — start an agent with a join token.</>}
      >
        {(rows) =>
          rows.map((n) => (
            <tr
              key={n.id}
              data-testid="fleet-row"
              data-node-name={n.name}
              data-state={n.state}
              data-stale={n.stale}
              data-revoked={n.credentialRevoked}
            >
              <td>
                <div className="strong">{n.name}</div>
                <div className="muted">
                  {n.provider} · {n.runtime}
                  {n.zone ? ` · ${n.zone}` : ""}
                </div>
              </td>
              <td>
                <div className="mono">{n.instanceType}</div>
                <div className="muted" data-testid="node-disk" data-disk-source={n.diskSource}>
                  disk {Math.round(n.diskWriteMiBps).toLocaleString("en-US")} MiB/s ·{" "}
                  {DISK_SOURCE[n.diskSource]}
                </div>
              </td>
              <td>{n.gpuModel}</td>
              <td className="num">
                {n.gpusUsed} / {n.gpuCount}
              </td>
              <td data-testid="node-holds">
                {n.holds.replicas.length + n.holds.images.length + n.holds.snapshots.length ===
                0 ? (
                  <span className="muted">nothing yet</span>
                ) : (
                  <ul className="holds">
                    {n.holds.replicas.map((r, i) => (
                      <li key={`r${i}`}>
                        replica {r.endpoint} <span className="muted">({r.state})</span>
                      </li>
                    ))}
                    {n.holds.snapshots.map((s, i) => (
                      <li key={`s${i}`}>
                        snapshot {s.label}{" "}
                        <span className="muted">
                          ({formatGB(s.bytes)}, {s.status})
                        </span>
                      </li>
                    ))}
                    {n.holds.images.map((m, i) => (
                      <li key={`i${i}`}>
                        image {m.label}{" "}
                        <span className="muted">
                          ({formatGB(m.bytes)}
                          {m.estargz ? ", eStargz" : ""})
                        </span>
                      </li>
                    ))}
                  </ul>
                )}
              </td>
              <td>
                <span className={`status state-${n.state}`} title={n.stateReason ?? undefined}>
                  {n.state}
                </span>
                {n.stale && <span className="status stale">stale</span>}
                {n.credentialRevoked && <span className="status state-lost">revoked</span>}
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
              {canCreateJoinToken && (
                <td>
                  <NodeActions node={n} />
                </td>
              )}
            </tr>
          ))
        }
      </QueryTable>
    </section>
  );
}
