"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useTRPC } from "../trpc/client.tsx";
import { formatAge, formatGB, formatSeconds } from "./format.ts";
import { PathMix } from "./path-mix.tsx";
import { QueryTable } from "./query-table.tsx";

const COLUMNS = [
  "Name",
  "GPU",
  "Min / desired / max replicas",
  "Ready / warm / starting",
  "Time to ready p50 / p95",
  "Path mix",
  "Last cold start",
  "Image",
  "Model",
  "Engine",
  "Allowed paths",
  "Objective",
];

export function EndpointsTable() {
  const trpc = useTRPC();
  const endpoints = useQuery(
    trpc.endpoints.list.queryOptions(undefined, { refetchInterval: 5_000 }),
  );

  return (
    <section className="card" aria-labelledby="endpoints-title">
      <h2 id="endpoints-title">Endpoints</h2>
      <QueryTable
        testId="endpoints-table"
        columns={COLUMNS}
        query={endpoints}
        noun="endpoints"
        empty={<>No endpoints yet.</>}
      >
        {(rows) =>
          rows.map((e) => (
            <tr key={e.id} data-testid="endpoint-row" data-slug={e.slug}>
              <td className="name-cell">
                <Link className="strong" href={`/endpoints/${e.slug}`}>
                  {e.name}
                </Link>
                <div className="muted mono">{e.slug}</div>
              </td>
              <td className="nowrap">
                {e.gpuType} × {e.gpuCount}
              </td>
              <td className="num">
                {e.minReplicas} / {e.desiredReplicas} / {e.maxReplicas}
              </td>
              <td className="num" data-testid="endpoint-replicas">
                {e.replicas.ready} / {e.replicas.warm} / {e.replicas.starting}
              </td>
              <td className="num nowrap" data-testid="endpoint-ttr">
                {formatSeconds(e.coldStarts.p50Seconds)} / {formatSeconds(e.coldStarts.p95Seconds)}
                <div className="muted">
                  {e.coldStarts.samples} ready start{e.coldStarts.samples === 1 ? "" : "s"}
                </div>
              </td>
              <td>
                <PathMix mix={e.coldStarts.pathMix} />
              </td>
              <td className="nowrap">
                {e.coldStarts.lastColdStartAt
                  ? `${formatAge((Date.now() - e.coldStarts.lastColdStartAt.getTime()) / 1000)} ago`
                  : "never"}
              </td>
              <td>
                <div className="mono truncate" title={e.activeDeployment?.imageRef}>
                  {e.activeDeployment?.imageRef ?? "—"}
                </div>
                <div className="muted">{formatGB(e.activeDeployment?.imageBytes)}</div>
              </td>
              <td className="nowrap">
                {formatGB(e.activeDeployment?.modelBytes)}
                {e.activeDeployment && (
                  <div className="muted">{e.activeDeployment.modelFormat}</div>
                )}
              </td>
              <td>{e.activeDeployment?.engine ?? "—"}</td>
              <td>
                <ul className="chips">
                  {e.allowedPaths.map((p) => (
                    <li key={p} className="chip">
                      {p}
                    </li>
                  ))}
                </ul>
              </td>
              <td>{e.objective}</td>
            </tr>
          ))
        }
      </QueryTable>
    </section>
  );
}
