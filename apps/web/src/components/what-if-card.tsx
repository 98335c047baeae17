"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { WhatIfReport } from "@thaw/core/what-if";
import {
  CartesianGrid,
  Legend,
  ResponsiveContainer,
  Scatter,
  ScatterChart,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { useTRPC } from "../trpc/client.tsx";
import { ChartFigure } from "./chart-figure.tsx";
import { errorMessage } from "./query-state.tsx";

// What-if (analytics.endpointWhatIf): the endpoint's recorded week replayed under thaw's
// prices of waiting and the fixed keep-alives, as frontiers of mean wait against idle
// GPU-hours and against cost, today's setting marked; a thaw point can be applied (it sets
// the endpoint's price through endpoints.update) by those who may edit the endpoint.

type Point = WhatIfReport["points"][number];
type Family = Point["family"];

/** One series per family; the fixed ones dashed with their own marks (they often overlap). */
const FAMILIES: {
  family: Family;
  label: string;
  color: string;
  shape: "circle" | "triangle" | "square";
  dash?: string;
}[] = [
  { family: "thaw", label: "Thaw (price of waiting)", color: "#2563eb", shape: "circle" },
  {
    family: "pull-keepalive",
    label: "Fixed keep-alive, pull",
    color: "#dc2626",
    shape: "triangle",
    dash: "6 3",
  },
  {
    family: "lazy-keepalive",
    label: "Fixed keep-alive, lazy",
    color: "#d97706",
    shape: "square",
    dash: "2 3",
  },
];
const LABEL: Record<Family, string> = {
  thaw: "Thaw",
  "pull-keepalive": "Keep-alive, pull",
  "lazy-keepalive": "Keep-alive, lazy",
};

const seconds = (s: number) => (s < 10 ? `${s.toFixed(2)} s` : `${s.toFixed(1)} s`);
const dollars = (usd: number) => `$${usd.toFixed(usd < 100 ? 2 : 0)}`;
const settingText = (p: Point) =>
  p.family === "thaw"
    ? p.gpuSecondsPerWaitSecond === null
      ? "platform default"
      : `${p.gpuSecondsPerWaitSecond} GPU-s per s of wait`
    : `keep ${p.setting}`;

export function WhatIfCard({ slug, canApply }: { slug: string; canApply: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const whatIf = useQuery({
    ...trpc.analytics.endpointWhatIf.queryOptions({ endpoint: slug }),
    // A replay is a second of a scheduler's CPU: asked for once per view, not polled.
    staleTime: 5 * 60_000,
    refetchOnWindowFocus: false,
    retry: 1,
  });
  const apply = useMutation(
    trpc.endpoints.update.mutationOptions({
      onSuccess: () =>
        Promise.all([
          queryClient.invalidateQueries(trpc.analytics.pathFilter()),
          queryClient.invalidateQueries(trpc.endpoints.pathFilter()),
        ]),
    }),
  );

  return (
    <section className="card" aria-labelledby="what-if-heading" data-testid="what-if">
      <h2 id="what-if-heading">What-if — this endpoint&apos;s last week, replayed</h2>
      {whatIf.isPending || (whatIf.isFetching && !whatIf.data) ? (
        <p className="muted" data-testid="what-if-loading" aria-live="polite">
          Replaying the recorded load under each setting…
        </p>
      ) : whatIf.isError ? (
        <p className="form-error" role="alert">
          Could not run the what-if: {errorMessage(whatIf.error)}
        </p>
      ) : whatIf.data.status === "no_load" ? (
        <div data-testid="what-if-empty">
          <p>{whatIf.data.message}</p>
          <pre className="small">{`curl -X POST $THAW_URL/api/v1/endpoints/${slug}/signals \\
  -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" \\
  -d '{"inFlightRequests": 12, "queueDepth": 0}'`}</pre>
        </div>
      ) : (
        <WhatIfResult
          report={whatIf.data}
          refreshing={whatIf.isFetching}
          canApply={canApply}
          applying={apply.isPending}
          onApply={(gpuSecondsPerWaitSecond) =>
            apply.mutate({ endpoint: slug, changes: { gpuSecondsPerWaitSecond } })
          }
        />
      )}
      {apply.isError && (
        <p className="form-error" role="alert">
          {errorMessage(apply.error)}
        </p>
      )}
    </section>
  );
}

function WhatIfResult({
  report,
  refreshing,
  canApply,
  applying,
  onApply,
}: {
  report: WhatIfReport;
  refreshing: boolean;
  canApply: boolean;
  applying: boolean;
  onApply: (gpuSecondsPerWaitSecond: number | null) => void;
}) {
  const today = report.points.find((p) => p.current);
  const priced = report.fleet.usdPerGpuHour !== null;
  const costOf = (p: Point) => (priced ? (p.costUsd ?? 0) : p.gpuHours);
  const costUnit = priced ? "$" : "GPU-h";
  const series = (x: (p: Point) => number) =>
    FAMILIES.map(({ family, label, color, shape, dash }) => ({
      family,
      label,
      color,
      shape,
      dash,
      data: report.points
        .filter((p) => p.family === family)
        .map((p) => ({ x: x(p), y: p.meanWaitSeconds, setting: p.setting }))
        .sort((a, b) => a.x - b.x),
    }));
  const chart = (x: (p: Point) => number, unit: string) => (
    <ResponsiveContainer width="100%" height={260}>
      <ScatterChart margin={{ top: 8, right: 16, bottom: 16, left: 8 }}>
        <CartesianGrid strokeDasharray="3 3" />
        <XAxis
          type="number"
          dataKey="x"
          name={unit}
          domain={["auto", "auto"]}
          tickFormatter={(v: number) => (unit === "$" ? `$${v}` : `${v} ${unit}`)}
        />
        <YAxis type="number" dataKey="y" name="mean wait" unit=" s" width={64} />
        <Tooltip cursor={{ strokeDasharray: "3 3" }} />
        <Legend />
        {series(x).map((s) => (
          <Scatter
            key={s.family}
            name={s.label}
            data={s.data}
            fill={s.color}
            shape={s.shape}
            legendType={s.shape}
            line={{ stroke: s.color, strokeDasharray: s.dash }}
            isAnimationActive={false}
          />
        ))}
        {today && (
          <Scatter
            name="Today's setting"
            data={[{ x: x(today), y: today.meanWaitSeconds, setting: today.setting }]}
            fill="#111827"
            shape="star"
            legendType="star"
            isAnimationActive={false}
          />
        )}
      </ScatterChart>
    </ResponsiveContainer>
  );
  const tableRows = report.points.map((p) => [
    LABEL[p.family],
    settingText(p),
    p.meanWaitSeconds,
    p.p99WaitSeconds,
    p.idleGpuHours,
    priced ? (p.costUsd ?? 0) : p.gpuHours,
  ]);

  return (
    <>
      <p data-testid="what-if-summary">
        {report.load.minutes.toLocaleString("en-US")} minutes of load from{" "}
        {new Date(report.from).toLocaleDateString("en-GB")} to{" "}
        {new Date(report.to).toLocaleDateString("en-GB")} (peak {report.load.peakConcurrency} in
        flight, mean {report.load.meanConcurrency.toFixed(2)}), replayed under{" "}
        {report.points.length} settings in {report.replaySeconds.toFixed(1)} s.{" "}
        {today && (
          <>
            Today ({settingText(today)}): mean wait{" "}
            <strong>{seconds(today.meanWaitSeconds)}</strong>, {today.idleGpuHours.toFixed(1)} idle
            GPU-h
            {today.costUsd !== null && <>, {dollars(today.costUsd)}</>}.
          </>
        )}
        {refreshing && <span className="muted"> Refreshing…</span>}
      </p>
      <p className="muted small">{report.message}</p>
      <ChartFigure
        id="what-if-idle"
        testId="what-if-frontier"
        title="Mean wait against idle GPU-hours, per setting"
        description="Each line is a policy swept over its setting (thaw over its price of waiting, the fixed policies over their keep-alive); lower and further left is better. The star is today's setting."
        table={{
          columns: ["Policy", "Setting", "Mean wait (s)", "p99 wait (s)", "Idle GPU-h", costUnit],
          rows: tableRows,
        }}
      >
        {chart((p) => p.idleGpuHours, "idle GPU-h")}
      </ChartFigure>
      <ChartFigure
        id="what-if-cost"
        title={
          priced
            ? "Mean wait against cost"
            : "Mean wait against GPU-hours (the hosts have no price)"
        }
        description={
          priced
            ? `Every GPU-hour held (starting, serving, idle) at $${report.fleet.usdPerGpuHour}/GPU-hour, the org's ${report.fleet.gpuModel} hosts' price.`
            : "Every GPU-hour held: starting, serving and idle."
        }
        table={{
          columns: ["Policy", "Setting", "Mean wait (s)", "p99 wait (s)", "Idle GPU-h", costUnit],
          rows: tableRows,
        }}
      >
        {chart(costOf, costUnit)}
      </ChartFigure>
      <div className="table-scroll">
        <table data-testid="what-if-table">
          <thead>
            <tr>
              <th scope="col">Policy</th>
              <th scope="col">Setting</th>
              <th scope="col">Mean wait</th>
              <th scope="col">p99 wait</th>
              <th scope="col">Cold</th>
              <th scope="col">Idle GPU-h</th>
              <th scope="col">GPU-h</th>
              <th scope="col">Cost</th>
              <th scope="col">
                <span className="sr-only">Apply</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {report.points.map((p) => (
              <tr
                key={`${p.family}-${p.setting}`}
                data-testid="what-if-point"
                data-current={p.current ? "true" : undefined}
                className={p.current ? "current" : undefined}
              >
                <td>{LABEL[p.family]}</td>
                <td>
                  {settingText(p)}
                  {p.current && <strong> (today)</strong>}
                </td>
                <td>{seconds(p.meanWaitSeconds)}</td>
                <td>{seconds(p.p99WaitSeconds)}</td>
                <td>{(p.coldStartFraction * 100).toFixed(1)}%</td>
                <td>{p.idleGpuHours.toFixed(1)}</td>
                <td>{p.gpuHours.toFixed(1)}</td>
                <td>{p.costUsd === null ? "—" : dollars(p.costUsd)}</td>
                <td>
                  {p.apply && canApply ? (
                    <button
                      type="button"
                      className="button"
                      data-testid="what-if-apply"
                      aria-label={`Apply ${settingText(p)}`}
                      disabled={applying}
                      onClick={() => onApply(p.apply!.gpuSecondsPerWaitSecond)}
                    >
                      Apply
                    </button>
                  ) : p.family !== "thaw" ? (
                    <span className="muted small">comparison</span>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
