"use client";

import { WEBHOOK_EVENT_TYPES } from "@thaw/core/schemas";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc/client.tsx";
import { formatAge } from "./format.ts";
import { errorMessage } from "./query-state.tsx";
import { QueryTable } from "./query-table.tsx";
import { WebhookDeliveries } from "./webhook-deliveries.tsx";

const COLUMNS = ["URL", "Events", "Format", "Enabled", "Created", ""];

/**
 * The org's webhook subscriptions: create (the signing secret is shown once), enable or
 * disable, rotate the secret (shown once again; the old one signs 24 h more), delete, and
 * each one's delivery log.
 */
export function WebhooksCard() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.webhooks.list.queryOptions());
  const refresh = () => queryClient.invalidateQueries(trpc.webhooks.list.queryFilter());
  const [url, setUrl] = useState("");
  const [description, setDescription] = useState("");
  const [types, setTypes] = useState<string[]>(["cold_start.failed", "cold_start.slow"]);
  const [format, setFormat] = useState<"standard" | "slack">("standard");
  const [shown, setShown] = useState<{ url: string; secret: string } | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const create = useMutation(
    trpc.webhooks.create.mutationOptions({
      onSuccess: (created) => {
        setShown({ url: created.url, secret: created.secret });
        setUrl("");
        setDescription("");
        void refresh();
      },
    }),
  );
  const rotate = useMutation(
    trpc.webhooks.rotateSecret.mutationOptions({
      onSuccess: (rotated) => {
        setShown({ url: rotated.url, secret: rotated.secret });
        void refresh();
      },
    }),
  );
  const update = useMutation(trpc.webhooks.update.mutationOptions({ onSuccess: refresh }));
  const remove = useMutation(
    trpc.webhooks.delete.mutationOptions({
      onSuccess: (_answer, input) => {
        if (selected === input.id) setSelected(null);
        void refresh();
      },
    }),
  );
  const failure = [create, rotate, update, remove].find((m) => m.isError);

  return (
    <>
      <section className="card" aria-labelledby="webhooks-title">
        <div className="card-head">
          <h2 id="webhooks-title">Webhooks</h2>
        </div>
        <p className="muted small">
          Events are POSTed as JSON and signed per Standard Webhooks (webhook-id, webhook-timestamp,
          webhook-signature), or, in the Slack format, as a chat message for a Slack-compatible
          incoming webhook; failed deliveries are retried with backoff for about an hour. URLs must
          be https on a public host. Alerts arrive as <code>alert.firing</code> and{" "}
          <code>alert.resolved</code>.
        </p>
        <form
          className="api-key-form"
          data-testid="webhook-form"
          onSubmit={(event) => {
            event.preventDefault();
            create.mutate({
              url,
              eventTypes: types as (typeof WEBHOOK_EVENT_TYPES)[number][],
              format,
              ...(description ? { description } : {}),
            });
          }}
        >
          <label>
            URL{" "}
            <input
              name="webhook-url"
              value={url}
              required
              placeholder="https://hooks.example.com/thaw"
              onChange={(e) => setUrl(e.target.value)}
            />
          </label>
          <label>
            Description{" "}
            <input
              name="webhook-description"
              value={description}
              onChange={(e) => setDescription(e.target.value)}
            />
          </label>
          <label>
            Format{" "}
            <select
              name="webhook-format"
              value={format}
              onChange={(e) => setFormat(e.target.value as "standard" | "slack")}
            >
              <option value="standard">Standard Webhooks JSON</option>
              <option value="slack">Slack-compatible message</option>
            </select>
          </label>
          <fieldset>
            <legend>Events</legend>
            {WEBHOOK_EVENT_TYPES.map((type) => (
              <label key={type} className="small">
                <input
                  type="checkbox"
                  name="webhook-event"
                  value={type}
                  checked={types.includes(type)}
                  onChange={(e) =>
                    setTypes((now) =>
                      e.target.checked ? [...now, type] : now.filter((t) => t !== type),
                    )
                  }
                />{" "}
                <code>{type}</code>
              </label>
            ))}
          </fieldset>
          <button
            type="submit"
            className="button primary"
            disabled={create.isPending || types.length === 0}
          >
            {create.isPending ? "Creating…" : "Add webhook"}
          </button>
        </form>
        {failure && (
          <p className="form-error" role="alert">
            {errorMessage(failure.error)}
          </p>
        )}
        {shown && (
          <div className="token-box" role="status" data-testid="webhook-secret">
            <p>
              Signing secret for <strong>{shown.url}</strong> — shown once, copy it now. Verify each
              delivery&apos;s <code>webhook-signature</code> with it.
            </p>
            <div className="token-row">
              <code className="token" data-testid="webhook-secret-value">
                {shown.secret}
              </code>
              <button type="button" className="button" onClick={() => setShown(null)}>
                Done
              </button>
            </div>
          </div>
        )}
        <QueryTable
          testId="webhooks-table"
          columns={COLUMNS}
          query={{ ...list, data: list.data?.webhooks }}
          noun="webhooks"
          empty={<>No webhooks yet.</>}
        >
          {(rows) =>
            rows.map((w) => (
              <tr key={w.id} data-testid="webhook-row">
                <td className="mono">
                  {w.url}
                  {w.description && <div className="muted small">{w.description}</div>}
                </td>
                <td className="small">{w.eventTypes.join(", ")}</td>
                <td className="small">{w.format}</td>
                <td>
                  <input
                    type="checkbox"
                    aria-label="Enabled"
                    checked={w.enabled}
                    disabled={update.isPending}
                    onChange={(e) =>
                      update.mutate({ id: w.id, change: { enabled: e.target.checked } })
                    }
                  />
                </td>
                <td>{formatAge((Date.now() - Date.parse(w.createdAt)) / 1000)} ago</td>
                <td className="row-actions">
                  <button type="button" className="button" onClick={() => setSelected(w.id)}>
                    Deliveries
                  </button>{" "}
                  <button
                    type="button"
                    className="button"
                    disabled={rotate.isPending}
                    onClick={() => rotate.mutate({ id: w.id })}
                  >
                    Rotate secret
                  </button>{" "}
                  <button
                    type="button"
                    className="button"
                    disabled={remove.isPending}
                    onClick={() => remove.mutate({ id: w.id })}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))
          }
        </QueryTable>
      </section>
      {selected && <WebhookDeliveries webhookId={selected} />}
    </>
  );
}
