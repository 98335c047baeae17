"use client";

import { useQuery } from "@tanstack/react-query";
import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { useTRPC } from "../trpc/client.tsx";
import { GPU_TIME_CATEGORIES, GPU_TIME_COLORS, GPU_TIME_LABELS } from "./analytics-vocabulary.ts";
import { ChartFigure } from "./chart-figure.tsx";
import { errorMessage } from "./query-state.tsx";

// GPU time and what it cost over the last day (analytics.endpointCost / orgCost): one
// stacked bar per hour, a segment per category, with the totals and the dollars above it.

const hours = (seconds: number) => seconds / 3600;
/** GPU time in the unit that shows it: GPU-seconds, -minutes or -hours. */
const gpuHours = (seconds: number) =>
  seconds < 60
    ? `${Math.round(seconds)} GPU-s`
    : seconds < 3600
      ? `${(seconds / 60).toFixed(1)} GPU-min`
      : `${hours(seconds).toFixed(hours(seconds) < 10 ? 2 : 1)} GPU-h`;
const dollars = (usd: number) => `$${usd.toFixed(usd < 10 ? 2 : 0)}`;
const hourLabel = (iso: string) =>
  new Date(iso).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit" });

export function GpuCostCard({ endpoint }: { endpoint?: string }) {
  const trpc = useTRPC();
  const endpointCost = useQuery({
    ...trpc.analytics.endpointCost.queryOptions(
      { endpoint: endpoint ?? "", bucket: "hour" },
      { refetchInterval: 60_000 },
    ),
    enabled: endpoint !== undefined,
  });
  const orgCost = useQuery({
    ...trpc.analytics.orgCost.queryOptions({ bucket: "hour" }, { refetchInterval: 60_000 }),
    enabled: endpoint === undefined,
  });
  const report = endpoint !== undefined ? endpointCost : orgCost;
  const id = endpoint !== undefined ? "endpoint-cost" : "org-cost";

  return (
    <section className="card" aria-labelledby={`${id}-heading`} data-testid={id}>
      <h2 id={`${id}-heading`}>GPU time and cost — last 24 hours</h2>
      {report.isPending ? (
        <p className="muted">Loading GPU time…</p>
      ) : report.isError ? (
        <p className="form-error" role="alert">
          Could not load GPU time: {errorMessage(report.error)}
        </p>
      ) : (
        (() => {
          const r = report.data;
          const total = r.gpuSeconds.total;
          const share = (s: number) => (total > 0 ? `${Math.round((100 * s) / total)}%` : "0%");
          // Plotted in GPU-minutes while no bucket reaches a GPU-hour: small values stay readable.
          const peak = Math.max(
            0,
            ...r.series.map((b) => GPU_TIME_CATEGORIES.reduce((sum, c) => sum + b[c], 0)),
          );
          const [unit, per] = peak < 3600 ? (["min", 60] as const) : (["h", 3600] as const);
          const rows = r.series.map((b) => {
            const row: Record<string, string | number> = { label: hourLabel(b.at) };
            for (const c of GPU_TIME_CATEGORIES) row[c] = Math.round((b[c] / per) * 1000) / 1000;
            return row;
          });
          return (
            <>
              <p data-testid={`${id}-totals`}>
                <strong>{gpuHours(total)}</strong>
                {r.usd.total > 0 && <> · {dollars(r.usd.total)}</>}
                {total > 0 &&
                  ` — ${GPU_TIME_CATEGORIES.filter((c) => r.gpuSeconds[c] > 0)
                    .map((c) => `${GPU_TIME_LABELS[c]} ${share(r.gpuSeconds[c])}`)
                    .join(", ")}`}
                {r.unpricedGpuSeconds > 0 && (
                  <span className="muted">
                    {" "}
                    ({gpuHours(r.unpricedGpuSeconds)} on hosts without a price)
                  </span>
                )}
              </p>
              {r.startsByPath.length > 0 && (
                <p className="muted small">
                  Starting, by path:{" "}
                  {r.startsByPath
                    .map(
                      (p) =>
                        `${p.path} ${gpuHours(p.startingGpuSeconds)}${p.failedGpuSeconds > 0 ? ` (+${gpuHours(p.failedGpuSeconds)} failed)` : ""}`,
                    )
                    .join(" · ")}
                </p>
              )}
              <ChartFigure
                id={`${id}-chart`}
                title={`GPU-${unit === "h" ? "hours" : "minutes"} per ${r.bucket}, by what the GPUs did`}
                description="Stacked: serving, starting, held idle for a warm handover, burnt by failed starts, and stopping."
                table={{
                  columns: [
                    r.bucket === "day" ? "Day" : "Hour",
                    ...GPU_TIME_CATEGORIES.map((c) => `${GPU_TIME_LABELS[c]} (GPU-${unit})`),
                  ],
                  rows: rows.map((row) => [row.label!, ...GPU_TIME_CATEGORIES.map((c) => row[c]!)]),
                }}
              >
                <ResponsiveContainer width="100%" height={240}>
                  <BarChart data={rows} margin={{ top: 8, right: 8, bottom: 8, left: 8 }}>
                    <CartesianGrid strokeDasharray="3 3" vertical={false} />
                    <XAxis dataKey="label" minTickGap={24} />
                    <YAxis unit={` ${unit}`} width={72} />
                    <Tooltip />
                    <Legend />
                    {GPU_TIME_CATEGORIES.map((c) => (
                      <Bar
                        key={c}
                        dataKey={c}
                        name={GPU_TIME_LABELS[c]}
                        stackId="gpu"
                        fill={GPU_TIME_COLORS[c]}
                        isAnimationActive={false}
                      />
                    ))}
                  </BarChart>
                </ResponsiveContainer>
              </ChartFigure>
              {r.endpoints && r.endpoints.length > 0 && (
                <p className="muted small">
                  Dearest endpoints:{" "}
                  {r.endpoints
                    .slice(0, 5)
                    .map(
                      (e) =>
                        `${e.slug || e.endpointId.slice(0, 8)} ${gpuHours(e.gpuSeconds)}${e.usd > 0 ? ` ${dollars(e.usd)}` : ""}`,
                    )
                    .join(" · ")}
                </p>
              )}
            </>
          );
        })()
      )}
    </section>
  );
}
