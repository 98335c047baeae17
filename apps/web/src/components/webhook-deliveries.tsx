"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC } from "../trpc/client.tsx";
import { formatAge } from "./format.ts";
import { errorMessage } from "./query-state.tsx";
import { QueryTable } from "./query-table.tsx";

const COLUMNS = ["Event", "Status", "Attempts", "Last answer", "Created", ""];

/** One subscription's delivery log: each delivery's attempts and answers, and redelivery. */
export function WebhookDeliveries({ webhookId }: { webhookId: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const deliveries = useQuery({
    ...trpc.webhooks.deliveries.queryOptions({ id: webhookId, limit: 50 }),
    refetchInterval: 5_000,
  });
  const redeliver = useMutation(
    trpc.webhooks.redeliver.mutationOptions({
      onSuccess: () => queryClient.invalidateQueries(trpc.webhooks.deliveries.queryFilter()),
    }),
  );
  return (
    <section className="card" aria-labelledby="webhook-deliveries-title">
      <div className="card-head">
        <h2 id="webhook-deliveries-title">Deliveries</h2>
      </div>
      {redeliver.isError && (
        <p className="form-error" role="alert">
          {errorMessage(redeliver.error)}
        </p>
      )}
      <QueryTable
        testId="webhook-deliveries-table"
        columns={COLUMNS}
        query={{ ...deliveries, data: deliveries.data?.deliveries }}
        noun="deliveries"
        empty={<>No deliveries yet: none of the subscribed events has happened.</>}
      >
        {(rows) =>
          rows.map((d) => {
            const last = d.attemptLog[0];
            return (
              <tr key={d.id} data-testid="webhook-delivery-row">
                <td className="mono">{d.eventType}</td>
                <td>{d.status}</td>
                <td>{d.attempts}</td>
                <td className="small">
                  {last
                    ? `${last.statusCode ?? last.errorClass ?? "—"} in ${last.durationMs} ms${
                        last.error ? ` (${last.error})` : ""
                      }`
                    : "—"}
                  {d.nextAttemptAt && d.status === "pending" && (
                    <div className="muted">
                      next try in{" "}
                      {formatAge(Math.max(0, (Date.parse(d.nextAttemptAt) - Date.now()) / 1000))}
                    </div>
                  )}
                </td>
                <td>{formatAge((Date.now() - Date.parse(d.createdAt)) / 1000)} ago</td>
                <td>
                  <button
                    type="button"
                    className="button"
                    disabled={d.status === "pending" || redeliver.isPending}
                    onClick={() => redeliver.mutate({ deliveryId: d.id })}
                  >
                    Redeliver
                  </button>
                </td>
              </tr>
            );
          })
        }
      </QueryTable>
    </section>
  );
}
