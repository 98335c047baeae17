"use client";

import { BURN_RATE_CONDITIONS, formatBurnWindow } from "@thaw/core/schemas";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc/client.tsx";
import { errorMessage } from "./query-state.tsx";
import { QueryTable } from "./query-table.tsx";

const COLUMNS = ["Name", "Kind", "Endpoint", "Condition", "Firing", "Enabled", ""];
/**
 * The org's alert rules: a slow-start rule (a start past its predicted p90, named by its
 * slowest phase and that phase's bottleneck hint) or a time-to-ready SLO (multi-window burn
 * rates). Admins create, disable and delete them; everyone sees them.
 */
export function AlertRulesCard({ canManage }: { canManage: boolean }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const rules = useQuery(trpc.alerts.rules.queryOptions());
  const endpoints = useQuery({ ...trpc.endpoints.list.queryOptions(), enabled: canManage });
  const refresh = () => queryClient.invalidateQueries(trpc.alerts.pathFilter());
  const [kind, setKind] = useState<"slow_cold_start" | "time_to_ready_slo">("time_to_ready_slo");
  const [name, setName] = useState("");
  const [endpoint, setEndpoint] = useState("");
  const [threshold, setThreshold] = useState("120");
  const [objective, setObjective] = useState("95");
  const create = useMutation(
    trpc.alerts.create.mutationOptions({
      onSuccess: () => {
        setName("");
        void refresh();
      },
    }),
  );
  const update = useMutation(trpc.alerts.update.mutationOptions({ onSuccess: refresh }));
  const remove = useMutation(trpc.alerts.delete.mutationOptions({ onSuccess: refresh }));
  const failure = [create, update, remove].find((m) => m.isError);

  return (
    <section className="card" aria-labelledby="alert-rules-title">
      <div className="card-head">
        <h2 id="alert-rules-title">Alert rules</h2>
      </div>
      <p className="muted small">
        Alerts are sent as <code>alert.firing</code> and <code>alert.resolved</code> webhook events
        — once per episode — to every webhook subscribed to them (Standard Webhooks JSON, or a
        Slack-compatible message). An SLO rule pages when{" "}
        {BURN_RATE_CONDITIONS.filter((c) => c.severity === "page")
          .map(
            (c) =>
              `${formatBurnWindow(c.longSeconds)} and ${formatBurnWindow(c.shortSeconds)} burn faster than ${c.burnRate}×`,
          )
          .join(", or ")}
        , and opens a ticket on a slow burn (the SRE workbook&apos;s multi-window method).
      </p>
      {canManage && (
        <form
          className="api-key-form"
          data-testid="alert-rule-form"
          onSubmit={(event) => {
            event.preventDefault();
            const common = { name, ...(endpoint ? { endpoint } : {}) };
            create.mutate(
              kind === "slow_cold_start"
                ? { kind, ...common }
                : {
                    kind,
                    ...common,
                    thresholdSeconds: Number(threshold),
                    objective: Number(objective) / 100,
                  },
            );
          }}
        >
          <label>
            Kind{" "}
            <select
              name="alert-kind"
              value={kind}
              onChange={(e) => setKind(e.target.value as typeof kind)}
            >
              <option value="time_to_ready_slo">time-to-ready SLO</option>
              <option value="slow_cold_start">slow cold start (past its p90)</option>
            </select>
          </label>
          <label>
            Name{" "}
            <input
              name="alert-name"
              value={name}
              required
              placeholder="ready within 2 minutes"
              onChange={(e) => setName(e.target.value)}
            />
          </label>
          <label>
            Endpoint{" "}
            <select
              name="alert-endpoint"
              value={endpoint}
              onChange={(e) => setEndpoint(e.target.value)}
            >
              <option value="">every endpoint</option>
              {endpoints.data?.map((e) => (
                <option key={e.id} value={e.slug}>
                  {e.slug}
                </option>
              ))}
            </select>
          </label>
          {kind === "time_to_ready_slo" && (
            <>
              <label>
                Ready within (s){" "}
                <input
                  name="alert-threshold"
                  type="number"
                  min={1}
                  max={86400}
                  value={threshold}
                  onChange={(e) => setThreshold(e.target.value)}
                />
              </label>
              <label>
                Objective (%){" "}
                <input
                  name="alert-objective"
                  type="number"
                  min={50}
                  max={99.99}
                  step="0.01"
                  value={objective}
                  onChange={(e) => setObjective(e.target.value)}
                />
              </label>
            </>
          )}
          <button type="submit" className="button primary" disabled={create.isPending}>
            {create.isPending ? "Adding…" : "Add rule"}
          </button>
        </form>
      )}
      {failure && (
        <p className="form-error" role="alert">
          {errorMessage(failure.error)}
        </p>
      )}
      <QueryTable
        testId="alert-rules-table"
        columns={COLUMNS}
        query={{ ...rules, data: rules.data?.rules }}
        noun="alert rules"
        empty={<>No alert rules yet.</>}
      >
        {(rows) =>
          rows.map((r) => (
            <tr key={r.id} data-testid="alert-rule-row">
              <td>{r.name}</td>
              <td className="small">{r.kind === "slow_cold_start" ? "slow cold start" : "SLO"}</td>
              <td className="mono">{r.endpoint?.slug ?? "every endpoint"}</td>
              <td className="small">
                {r.kind === "slow_cold_start"
                  ? "a start past its predicted p90"
                  : `${((r.objective ?? 0) * 100).toFixed(2).replace(/\.?0+$/, "")} % ready within ${r.thresholdSeconds} s`}
              </td>
              <td>{r.openEpisodes > 0 ? <strong>{r.openEpisodes}</strong> : "—"}</td>
              <td>
                <input
                  type="checkbox"
                  aria-label="Enabled"
                  checked={r.enabled}
                  disabled={!canManage || update.isPending}
                  onChange={(e) =>
                    update.mutate({ id: r.id, change: { enabled: e.target.checked } })
                  }
                />
              </td>
              <td className="row-actions">
                {canManage && (
                  <button
                    type="button"
                    className="button"
                    disabled={remove.isPending}
                    onClick={() => remove.mutate({ id: r.id })}
                  >
                    Delete
                  </button>
                )}
              </td>
            </tr>
          ))
        }
      </QueryTable>
    </section>
  );
}
