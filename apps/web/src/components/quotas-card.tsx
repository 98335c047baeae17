"use client";

import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "../trpc/client.tsx";
import { QueryTable } from "./query-table.tsx";

const COLUMNS = ["Quota", "Used", "Limit", "Set by"];

const LABEL = {
  endpoints: "Live endpoints",
  apiKeys: "Live API keys",
  replicasPerEndpoint: "Replicas per endpoint (largest maxReplicas)",
  gpus: "GPUs at every endpoint's maxReplicas",
} as const;

/**
 * What the org may hold beside what it holds, so a write is not the first place a member
 * learns the ceiling; each row says how the operator raises it.
 */
export function QuotasCard() {
  const trpc = useTRPC();
  const usage = useQuery(trpc.org.quotas.queryOptions());
  const rows = usage.data?.quotas;
  return (
    <section className="card" aria-labelledby="quotas-title">
      <div className="card-head">
        <h2 id="quotas-title">Quotas</h2>
        {usage.data && (
          <p className="muted">
            Spend cap:{" "}
            {usage.data.spendCapUsdPerHour === null
              ? "the fleet's default"
              : `$${usage.data.spendCapUsdPerHour}/h`}
          </p>
        )}
      </div>
      <QueryTable
        testId="quotas"
        columns={COLUMNS}
        query={{ ...usage, data: rows }}
        noun="quotas"
        empty="No quotas."
      >
        {(quotas) =>
          quotas.map((q) => (
            <tr
              key={q.name}
              data-quota={q.name}
              className={q.used >= q.limit ? "at-limit" : undefined}
            >
              <th scope="row">{LABEL[q.name]}</th>
              <td>{q.used}</td>
              <td>{q.limit}</td>
              <td>
                {q.source === "org" ? "the operator, for this org" : "the operator's default"}{" "}
                <span className="muted">
                  (raise: <code>{q.raiseWith}</code>)
                </span>
              </td>
            </tr>
          ))
        }
      </QueryTable>
    </section>
  );
}
