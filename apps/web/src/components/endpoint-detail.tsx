"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { useTRPC } from "../trpc/client.tsx";
import { ColdStartBreakdownCharts } from "./cold-start-breakdown-charts.tsx";
import { ColdStartsCard } from "./cold-starts-card.tsx";
import { formatAge, formatGB, formatSeconds } from "./format.ts";
import { GpuCostCard } from "./gpu-cost-card.tsx";
import { WhatIfCard } from "./what-if-card.tsx";
import { PathMix } from "./path-mix.tsx";
import { errorMessage } from "./query-state.tsx";
import { ScaleControl } from "./scale-control.tsx";
import { WaitPriceControl } from "./wait-price-control.tsx";

const STATUS_LABEL = {
  scaled_to_zero: "scaled to zero",
  ready: "ready",
  scaling_up: "scaling up",
  scaling_down: "scaling down",
} as const;

const ago = (d: Date) => `${formatAge((Date.now() - d.getTime()) / 1000)} ago`;

const PRICE_SOURCE = {
  endpoint: "this endpoint's own",
  org: "the org's default",
  platform: "the platform's default",
} as const;

const CALIBRATION_VERDICT = {
  "no-starts": "no succeeded start with a predicted interval yet",
  "too-few-starts": "too few starts to judge",
  calibrated: "calibrated",
  "too-narrow": "intervals too narrow: the predictor is overconfident",
  "too-wide": "intervals too wide: the predictor is too cautious",
} as const;

/**
 * One endpoint: status, scale control, price of waiting, how well its predictions hold,
 * deployments, live replicas, cold starts and where their seconds went.
 */
export function EndpointDetail({
  slug,
  canScale,
  canEdit,
}: {
  slug: string;
  canScale: boolean;
  /** May change the endpoint's configuration (endpoints:write). */
  canEdit: boolean;
}) {
  const trpc = useTRPC();
  // Live updates: the cold starts card below subscribes, and re-reads these figures too.
  const detail = useQuery(
    trpc.analytics.endpointDetail.queryOptions({ endpoint: slug }, { refetchInterval: 5_000 }),
  );
  const [chosen, setChosen] = useState<string | null>(null);

  if (detail.isPending)
    return (
      <section className="card" data-testid="endpoint-detail" aria-busy="true">
        <p className="muted">Loading {slug}…</p>
      </section>
    );
  if (detail.isError)
    return (
      <section className="card" data-testid="endpoint-detail">
        <h1>{slug}</h1>
        <p className="form-error" role="alert">
          {errorMessage(detail.error)}
        </p>
        <Link href="/">Back to the overview</Link>
      </section>
    );
  const d = detail.data;
  const e = d.endpoint;
  const deploymentId = chosen ?? e.activeDeploymentId ?? d.deployments[0]?.id ?? null;
  const selected = d.deployments.find((x) => x.id === deploymentId);
  const price = e.effectiveGpuSecondsPerWaitSecond;
  const calibration = d.calibration;

  return (
    <div className="endpoint-detail" data-testid="endpoint-detail" data-slug={e.slug}>
      <section className="card" aria-labelledby="endpoint-title">
        <div className="card-head">
          <div>
            <h1 id="endpoint-title">{e.name}</h1>
            <div className="muted mono">{e.slug}</div>
          </div>
          <div className="endpoint-status">
            <span className={`status endpoint-${d.status}`} data-testid="endpoint-status">
              {STATUS_LABEL[d.status]}
            </span>
            <span className="strong" data-testid="endpoint-ready">
              {d.replicaCounts.ready} / {e.desiredReplicas} ready
            </span>
            <span className="muted">
              {" "}
              · {d.replicaCounts.warm} warm
              {d.replicaCounts.sleeping > 0 && ` · ${d.replicaCounts.sleeping} sleeping`} ·{" "}
              {d.replicaCounts.starting} starting
            </span>
          </div>
        </div>
        <dl className="facts">
          <div>
            <dt>GPU</dt>
            <dd>
              {e.gpuType} × {e.gpuCount}
            </dd>
          </div>
          <div>
            <dt>Replicas (min / max)</dt>
            <dd>
              {e.minReplicas} / {e.maxReplicas}
            </dd>
          </div>
          <div>
            <dt>Time to ready p50 / p95</dt>
            <dd>
              {formatSeconds(d.summary.p50Seconds)} / {formatSeconds(d.summary.p95Seconds)}
            </dd>
          </div>
          <div>
            <dt>Path mix</dt>
            <dd>
              <PathMix mix={d.summary.pathMix} />
            </dd>
          </div>
          <div>
            <dt>Last cold start</dt>
            <dd>{d.summary.lastColdStartAt ? ago(d.summary.lastColdStartAt) : "never"}</dd>
          </div>
          <div>
            <dt>Allowed paths · objective</dt>
            <dd>
              {e.allowedPaths.join(", ")} · {e.objective}
            </dd>
          </div>
          <div data-testid="wait-price" data-source={price.source}>
            <dt>Price of waiting</dt>
            <dd>
              {price.value === null ? (
                <span data-testid="wait-price-value">none</span>
              ) : (
                <>
                  <span data-testid="wait-price-value">{price.value}</span> GPU-s per second of wait
                </>
              )}{" "}
              <span className="muted">
                ·{" "}
                {price.value === null
                  ? "the platform's default: no more idle GPU time than a 10-minute keep-alive, spent where it saves the most wait"
                  : PRICE_SOURCE[price.source]}
              </span>
              <div className="muted small">
                Idle GPU time the warm pool may spend to save a request one second of wait.
              </div>
            </dd>
          </div>
          <div data-testid="prediction-calibration" data-verdict={calibration.verdict}>
            <dt>Predictions inside p10–p90</dt>
            <dd>
              <span data-testid="calibration-share">
                {calibration.insideShare === null
                  ? "—"
                  : `${Math.round(calibration.insideShare * 100)}%`}
              </span>{" "}
              of <span data-testid="calibration-starts">{calibration.starts}</span> starts{" "}
              <span className="muted">
                · target {Math.round(calibration.target.share * 100)}% ±{" "}
                {Math.round(calibration.target.tolerance * 100)}% over{" "}
                {calibration.target.minStarts}+ · {CALIBRATION_VERDICT[calibration.verdict]}
              </span>
              {calibration.starts > 0 && (
                <div className="muted small">
                  {calibration.faster} faster than p10, {calibration.slower} slower than p90
                </div>
              )}
            </dd>
          </div>
        </dl>
        {canScale && (
          <ScaleControl
            key={e.desiredReplicas}
            slug={e.slug}
            desired={e.desiredReplicas}
            min={e.minReplicas}
            max={e.maxReplicas}
          />
        )}
        {canEdit && (
          <WaitPriceControl
            key={e.gpuSecondsPerWaitSecond ?? "default"}
            slug={e.slug}
            own={e.gpuSecondsPerWaitSecond}
          />
        )}
      </section>

      <section className="card" aria-labelledby="deployments-title">
        <div className="card-head">
          <h2 id="deployments-title">Deployments</h2>
          <Link className="button" href={`/endpoints/${e.slug}/deploy`}>
            Roll a new version
          </Link>
        </div>
        <div className="table-scroll">
          <table data-testid="deployments-table">
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Status</th>
                <th scope="col">Image</th>
                <th scope="col">Model</th>
                <th scope="col">Engine</th>
                <th scope="col">Created</th>
                <th scope="col">Breakdown</th>
              </tr>
            </thead>
            <tbody>
              {d.deployments.length === 0 && (
                <tr className="state-row empty" data-testid="empty-row">
                  <td colSpan={7}>No deployment yet — roll the first version.</td>
                </tr>
              )}
              {d.deployments.map((x) => (
                <tr key={x.id} data-testid="deployment-row" data-version={x.version}>
                  <td className="num">v{x.version}</td>
                  <td>
                    <span className={`status deployment-${x.status}`}>{x.status}</span>
                  </td>
                  <td>
                    <div className="mono truncate" title={x.imageRef}>
                      {x.imageRef}
                    </div>
                    <div className="muted">
                      {formatGB(x.imageBytes)}
                      {x.estargzImageRef ? " · eStargz variant" : ""}
                    </div>
                  </td>
                  <td>
                    <div className="mono truncate" title={x.modelSource}>
                      {x.modelSource}
                    </div>
                    <div className="muted">
                      {formatGB(x.modelBytes)} {x.modelFormat}
                    </div>
                  </td>
                  <td>{x.engine}</td>
                  <td className="nowrap">{ago(x.createdAt)}</td>
                  <td>
                    <button
                      type="button"
                      className="button"
                      aria-pressed={x.id === deploymentId}
                      onClick={() => setChosen(x.id)}
                    >
                      {x.id === deploymentId ? "Shown below" : "Show"}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>

      <section className="card" aria-labelledby="replicas-title">
        <h2 id="replicas-title">Live replicas</h2>
        <div className="table-scroll">
          <table data-testid="replicas-table">
            <thead>
              <tr>
                <th scope="col">Replica</th>
                <th scope="col">State</th>
                <th scope="col">Version</th>
                <th scope="col">Node</th>
                <th scope="col">Since</th>
              </tr>
            </thead>
            <tbody>
              {d.replicas.length === 0 && (
                <tr className="state-row empty" data-testid="empty-row">
                  <td colSpan={5}>
                    No live replicas{e.desiredReplicas === 0 ? " — scaled to zero" : ""}.
                  </td>
                </tr>
              )}
              {d.replicas.map((r) => (
                <tr key={r.id} data-testid="replica-row" data-state={r.state}>
                  <td className="mono">{r.id.slice(-12)}</td>
                  <td>
                    <span className={`status state-${r.state}`}>{r.state}</span>
                    {r.reason && <div className="muted small">{r.reason}</div>}
                  </td>
                  <td className="num">
                    {r.deploymentVersion === null ? "—" : `v${r.deploymentVersion}`}
                  </td>
                  <td>
                    {r.nodeName ?? "—"}
                    {r.instanceType && <div className="muted small">{r.instanceType}</div>}
                  </td>
                  <td className="nowrap">{ago(r.since)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <h3>Recent scale events</h3>
        <div className="table-scroll">
          <table data-testid="scale-events-table">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Source</th>
                <th scope="col">Desired</th>
                <th scope="col">Reason</th>
              </tr>
            </thead>
            <tbody>
              {d.scaleEvents.length === 0 && (
                <tr className="state-row empty" data-testid="empty-row">
                  <td colSpan={4}>No scale events yet.</td>
                </tr>
              )}
              {d.scaleEvents.map((s) => (
                <tr key={s.id}>
                  <td className="nowrap">{ago(s.createdAt)}</td>
                  <td>
                    {s.source} <span className="muted small">({s.actorType})</span>
                  </td>
                  <td className="num">
                    {s.previousDesired} → {s.desired}
                  </td>
                  <td className="muted">{s.reason || "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>

      <ColdStartsCard endpointId={e.id} limit={25} />

      <GpuCostCard endpoint={e.slug} />

      <WhatIfCard slug={e.slug} canApply={canEdit} />

      <section className="card" aria-labelledby="breakdown-title">
        <h2 id="breakdown-title">
          Where the seconds went{selected ? ` — v${selected.version}` : ""}
        </h2>
        {deploymentId ? (
          <ColdStartBreakdownCharts key={deploymentId} deploymentId={deploymentId} />
        ) : (
          <p className="muted" data-testid="breakdown-empty">
            No deployment yet, so no cold starts to break down.
          </p>
        )}
      </section>
    </div>
  );
}
