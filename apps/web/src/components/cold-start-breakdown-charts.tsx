"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  ReferenceLine,
  ResponsiveContainer,
  Scatter,
  ScatterChart,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { useTRPC } from "../trpc/client.tsx";
import { PATH_COLORS, PHASE_COLORS, PHASES, START_PATHS } from "./analytics-vocabulary.ts";
import { BottleneckHintsList } from "./bottleneck-hints-list.tsx";
import { ChartFigure } from "./chart-figure.tsx";
import { formatSeconds } from "./format.ts";
import { errorMessage } from "./query-state.tsx";

const time = (d: Date) =>
  d.toLocaleString("en-GB", { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
const round1 = (n: number) => Math.round(n * 10) / 10;
const percent = (n: number) => `${(n * 100).toFixed(0)}%`;

/** Where every second of one deployment's cold starts went (analytics.deploymentBreakdown). */
export function ColdStartBreakdownCharts({ deploymentId }: { deploymentId: string }) {
  const trpc = useTRPC();
  // Re-read live as phases land (useLiveColdStarts invalidates analytics); slow poll as fallback.
  const breakdown = useQuery(
    trpc.analytics.deploymentBreakdown.queryOptions({ deploymentId }, { refetchInterval: 30_000 }),
  );
  if (breakdown.isPending)
    return (
      <p className="muted" data-testid="breakdown-loading">
        Loading the breakdown…
      </p>
    );
  if (breakdown.isError)
    return (
      <p className="form-error" role="alert">
        Could not load the breakdown: {errorMessage(breakdown.error)}
      </p>
    );
  const b = breakdown.data;
  if (b.starts.length === 0)
    return (
      <p className="muted" data-testid="breakdown-empty">
        Version {b.deployment.version} has no cold starts yet — scale the endpoint up to see where
        its seconds go.
      </p>
    );

  const phasesSeen = PHASES.filter((p) => b.starts.some((s) => s.seconds[p] > 0));
  const bars = b.starts.map((s, i) => ({
    label: `#${i + 1}`,
    when: time(s.requestedAt),
    path: s.path,
    status: s.status,
    ...Object.fromEntries(phasesSeen.map((p) => [p, round1(s.seconds[p])])),
  }));
  const quantileRows = b.phaseQuantiles.map((q) => ({
    label: `${q.path} · ${q.phase}`,
    p50: round1(q.p50Seconds),
    p95: round1(q.p95Seconds),
  }));
  const maxPoint = Math.max(
    1,
    ...b.predictedVsActual.flatMap((p) => [p.predictedSeconds, p.actualSeconds]),
  );
  const mix = b.pathMix.buckets.map((bucket) => ({
    label: time(bucket.bucketStart),
    ...bucket.counts,
  }));
  const pathsSeen = START_PATHS.filter((p) => mix.some((m) => m[p] > 0));

  return (
    <div className="breakdown" data-testid="deployment-breakdown">
      <p className="muted">
        Version {b.deployment.version}: the latest {b.starts.length} cold start
        {b.starts.length === 1 ? "" : "s"}; time to ready p50 {formatSeconds(b.summary.p50Seconds)},
        p95 {formatSeconds(b.summary.p95Seconds)} over {b.summary.samples} ready.
      </p>
      <div className="chart-grid">
        <ChartFigure
          id="breakdown-stacked"
          testId="breakdown-chart"
          title="Seconds per phase, each cold start"
          description="One stacked bar per cold start, oldest first; each segment is a phase's seconds."
          table={{
            columns: ["#", "Requested", "Path", "Status", ...phasesSeen, "Total (s)"],
            rows: b.starts.map((s, i) => [
              i + 1,
              time(s.requestedAt),
              s.path,
              s.status,
              ...phasesSeen.map((p) => round1(s.seconds[p])),
              round1(s.totalSeconds),
            ]),
          }}
        >
          <ResponsiveContainer width="100%" height={280}>
            <BarChart data={bars} margin={{ top: 8, right: 8, bottom: 8, left: 8 }}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis dataKey="label" />
              <YAxis unit=" s" width={60} />
              <Tooltip
                labelFormatter={(_, payload) => {
                  const row = payload?.[0]?.payload as (typeof bars)[number] | undefined;
                  return row ? `${row.when} · ${row.path} · ${row.status}` : "";
                }}
              />
              <Legend />
              {phasesSeen.map((p) => (
                <Bar
                  key={p}
                  dataKey={p}
                  stackId="phases"
                  fill={PHASE_COLORS[p]}
                  isAnimationActive={false}
                />
              ))}
            </BarChart>
          </ResponsiveContainer>
        </ChartFigure>

        <ChartFigure
          id="breakdown-quantiles"
          title="p50 and p95 per phase, per path"
          description="Seconds of each phase over succeeded starts, by start path."
          table={{
            columns: ["Path", "Phase", "Samples", "p50 (s)", "p95 (s)"],
            rows: b.phaseQuantiles.map((q) => [
              q.path,
              q.phase,
              q.samples,
              round1(q.p50Seconds),
              round1(q.p95Seconds),
            ]),
          }}
        >
          {quantileRows.length === 0 ? (
            <p className="muted">No succeeded start yet.</p>
          ) : (
            <ResponsiveContainer width="100%" height={Math.max(160, quantileRows.length * 26 + 60)}>
              <BarChart
                data={quantileRows}
                layout="vertical"
                margin={{ top: 8, right: 16, bottom: 8, left: 8 }}
              >
                <CartesianGrid strokeDasharray="3 3" horizontal={false} />
                <XAxis type="number" unit=" s" />
                <YAxis type="category" dataKey="label" width={170} />
                <Tooltip />
                <Legend />
                <Bar dataKey="p50" fill="#2563eb" isAnimationActive={false} />
                <Bar dataKey="p95" fill="#93c5fd" isAnimationActive={false} />
              </BarChart>
            </ResponsiveContainer>
          )}
        </ChartFigure>

        <ChartFigure
          id="breakdown-predicted"
          title="Predicted vs actual time to ready"
          description="Each succeeded start: predicted seconds across, actual seconds up; on the diagonal the prediction was exact, above it the start was slower."
          table={{
            columns: ["Requested", "Path", "Predicted (s)", "Actual (s)", "Error (s)"],
            rows: b.predictedVsActual.map((p) => [
              time(p.requestedAt),
              p.path,
              round1(p.predictedSeconds),
              round1(p.actualSeconds),
              round1(p.errorSeconds),
            ]),
          }}
        >
          {b.predictedVsActual.length === 0 ? (
            <p className="muted">No succeeded start yet.</p>
          ) : (
            <ResponsiveContainer width="100%" height={280}>
              <ScatterChart margin={{ top: 8, right: 16, bottom: 8, left: 8 }}>
                <CartesianGrid strokeDasharray="3 3" />
                <XAxis
                  type="number"
                  dataKey="predictedSeconds"
                  name="Predicted"
                  unit=" s"
                  domain={[0, maxPoint]}
                  tickFormatter={roundTick}
                />
                <YAxis
                  type="number"
                  dataKey="actualSeconds"
                  name="Actual"
                  unit=" s"
                  domain={[0, maxPoint]}
                  tickFormatter={roundTick}
                  width={60}
                />
                <Tooltip cursor={{ strokeDasharray: "3 3" }} />
                <Legend />
                <ReferenceLine
                  segment={[
                    { x: 0, y: 0 },
                    { x: maxPoint, y: maxPoint },
                  ]}
                  stroke="#98a2b3"
                  strokeDasharray="4 4"
                />
                {START_PATHS.filter((p) => b.predictedVsActual.some((x) => x.path === p)).map(
                  (p) => (
                    <Scatter
                      key={p}
                      name={p}
                      data={b.predictedVsActual.filter((x) => x.path === p)}
                      fill={PATH_COLORS[p]}
                      isAnimationActive={false}
                    />
                  ),
                )}
              </ScatterChart>
            </ResponsiveContainer>
          )}
        </ChartFigure>

        <ChartFigure
          id="breakdown-mix"
          title="Path mix over time"
          description={`Cold starts per chosen path, in buckets of ${b.pathMix.bucketSeconds >= 3600 ? `${b.pathMix.bucketSeconds / 3600} h` : `${b.pathMix.bucketSeconds / 60} min`}.`}
          table={{
            columns: ["From", ...START_PATHS],
            rows: b.pathMix.buckets.map((x) => [
              time(x.bucketStart),
              ...START_PATHS.map((p) => x.counts[p]),
            ]),
          }}
        >
          <ResponsiveContainer width="100%" height={240}>
            <BarChart data={mix} margin={{ top: 8, right: 8, bottom: 8, left: 8 }}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis dataKey="label" />
              <YAxis allowDecimals={false} width={40} />
              <Tooltip />
              <Legend />
              {pathsSeen.map((p) => (
                <Bar
                  key={p}
                  dataKey={p}
                  stackId="paths"
                  fill={PATH_COLORS[p]}
                  isAnimationActive={false}
                />
              ))}
            </BarChart>
          </ResponsiveContainer>
        </ChartFigure>
      </div>

      <h3>Prediction error by path</h3>
      <div className="table-scroll">
        <table data-testid="prediction-error">
          <thead>
            <tr>
              <th scope="col">Path</th>
              <th scope="col">Samples</th>
              <th scope="col">Mean |error|</th>
              <th scope="col">Bias (actual − predicted)</th>
              <th scope="col">Median |error| / actual</th>
              <th scope="col">Mean |log error|</th>
            </tr>
          </thead>
          <tbody>
            {b.predictionError.length === 0 && (
              <tr className="state-row empty">
                <td colSpan={6}>No succeeded start yet.</td>
              </tr>
            )}
            {b.predictionError.map((e) => (
              <tr key={e.path}>
                <td>
                  <span className="path-tag">{e.path}</span>
                </td>
                <td className="num">{e.samples}</td>
                <td className="num">{formatSeconds(e.meanAbsoluteErrorSeconds)}</td>
                <td className="num">
                  {e.biasSeconds >= 0 ? "+" : "−"}
                  {formatSeconds(Math.abs(e.biasSeconds))}
                </td>
                <td className="num">{percent(e.medianAbsolutePercentError)}</td>
                <td className="num">{e.meanAbsoluteLogError.toFixed(3)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>

      <h3>What bounds each path</h3>
      {b.bottlenecks.length === 0 && <p className="muted">No succeeded start to read yet.</p>}
      {b.bottlenecks.map((x) => (
        <section
          key={x.path}
          className="path-bottlenecks"
          aria-label={`Bottlenecks of the ${x.path} path`}
        >
          <h4>
            <span className="path-tag">{x.path}</span>{" "}
            <span className="muted small">
              latest succeeded start,{" "}
              <Link href={`/cold-starts/${x.coldStartId}`}>{time(x.requestedAt)}</Link>
            </span>
          </h4>
          <BottleneckHintsList hints={x.hints} />
        </section>
      ))}
    </div>
  );
}

/** Axis ticks in whole seconds: a domain ending at a measured value must not print its decimals. */
function roundTick(value: number): string {
  return String(Math.round(value));
}
