"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "../trpc/client.tsx";
import { BottleneckHintsList } from "./bottleneck-hints-list.tsx";
import { formatSeconds as seconds } from "./format.ts";
import { PredictedSeconds } from "./predicted-seconds.tsx";
import { errorMessage } from "./query-state.tsx";

const MB = 1e6;

/** A cold start's phases as a waterfall (bytes, throughput), and why its path won. */
export function ColdStartDetail({ id, standalone = false }: { id: string; standalone?: boolean }) {
  const trpc = useTRPC();
  const detail = useQuery(
    trpc.coldStarts.get.queryOptions(
      { id },
      {
        // In flight: the live stream (ColdStartsCard) re-reads it as phases arrive; this slow
        // poll only covers a stream that is down, until the start is closed.
        refetchInterval: (query) =>
          ["succeeded", "failed", "cancelled"].includes(query.state.data?.status ?? "")
            ? false
            : 5_000,
      },
    ),
  );
  if (detail.isPending) return <p className="muted">Loading the breakdown…</p>;
  if (detail.isError)
    return (
      <p className="form-error" role="alert">
        {errorMessage(detail.error)}
      </p>
    );
  const start = detail.data;
  const total = Math.max(
    start.phases.reduce((sum, p) => sum + (p.seconds ?? 0), 0),
    Number.MIN_VALUE,
  );
  let offset = 0;
  return (
    <div className="cold-start-detail" data-testid="cold-start-detail">
      <h3>
        {standalone ? (
          <Link href={`/endpoints/${start.endpoint.slug}`}>{start.endpoint.slug}</Link>
        ) : (
          start.endpoint.slug
        )}{" "}
        v{start.deploymentVersion}: {start.path} on {start.node?.name ?? "—"} — {start.status}
        {start.actualSeconds != null && `, ${seconds(start.actualSeconds)}`} (predicted{" "}
        <PredictedSeconds start={start} />)
      </h3>
      {start.error && <p className="form-error">{start.error}</p>}
      {!standalone && (
        <p>
          <Link href={`/cold-starts/${start.id}`}>Open this cold start on its own page</Link>
        </p>
      )}
      <ol className="waterfall" aria-label="Phases">
        {start.phases.map((p) => {
          const left = (offset / total) * 100;
          const width = ((p.seconds ?? 0) / total) * 100;
          offset += p.seconds ?? 0;
          return (
            <li key={p.sequence} data-testid="phase" data-phase={p.phase}>
              <span className="phase-name">{p.phase}</span>
              <span className="phase-track">
                <span
                  className={`phase-bar phase-${p.phase}`}
                  style={{ marginLeft: `${left}%`, width: `max(${width}%, 2px)` }}
                />
              </span>
              <span className="phase-figures">
                {seconds(p.seconds)}
                {p.bytes ? ` · ${(p.bytes / 1e9).toFixed(2)} GB` : ""}
                {p.throughputBps ? ` · ${(p.throughputBps / MB).toFixed(0)} MB/s` : ""}
              </span>
            </li>
          );
        })}
      </ol>
      <h4>What bounded it</h4>
      <BottleneckHintsList hints={start.bottlenecks} />
      <h4>Why {start.path}</h4>
      <p className="muted">{start.explanation}</p>
      <div className="table-scroll">
        <table data-testid="cold-start-options">
          <thead>
            <tr>
              <th scope="col">Option</th>
              <th scope="col">Holds</th>
              <th scope="col">Predicted (mean / p90)</th>
              <th scope="col">Samples</th>
              <th scope="col">Outcome</th>
            </tr>
          </thead>
          <tbody>
            {(start.options.feasible ?? []).map((o) => (
              <tr key={`${o.nodeName}-${o.path}`}>
                <td>
                  {o.path} on {o.nodeName}
                  {o.peerSourceNodeName
                    ? o.path === "restore"
                      ? `, weights from ${o.peerSourceNodeName}`
                      : ` from ${o.peerSourceNodeName}`
                    : ""}
                  {o.kernelCacheId ? ", with the stored kernel cache" : ""}
                </td>
                <td>{o.locality}</td>
                <td className="num">
                  {seconds(o.predictedSeconds)} / {seconds(o.p90Seconds)}
                </td>
                <td className="num">{o.samples}</td>
                <td>{o.chosen ? <strong>chosen</strong> : (o.lostBecause ?? "—")}</td>
              </tr>
            ))}
            {(start.options.infeasible ?? []).map((o) => (
              <tr key={`infeasible-${o.path}-${o.reason}`} className="muted">
                <td>
                  {o.path} on {o.nodes} node{o.nodes === 1 ? "" : "s"}
                </td>
                <td colSpan={4}>infeasible: {o.reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
