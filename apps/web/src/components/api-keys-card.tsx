"use client";

import { API_KEY_SCOPES } from "@thaw/core/auth";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc/client.tsx";
import { formatAge } from "./format.ts";
import { errorMessage } from "./query-state.tsx";
import { QueryTable } from "./query-table.tsx";

const COLUMNS = ["Name", "Key", "Scopes", "Last used", "State", ""];

/** API keys for the REST API: create (the secret is shown once), list, revoke. */
export function ApiKeysCard() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const keys = useQuery(trpc.apiKeys.list.queryOptions());
  const refresh = () => queryClient.invalidateQueries(trpc.apiKeys.list.queryFilter());
  const create = useMutation(trpc.apiKeys.create.mutationOptions({ onSuccess: refresh }));
  const revoke = useMutation(trpc.apiKeys.revoke.mutationOptions({ onSuccess: refresh }));
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<string[]>(["endpoints:read", "endpoints:scale"]);

  return (
    <section className="card" aria-labelledby="api-keys-title">
      <div className="card-head">
        <h2 id="api-keys-title">API keys</h2>
      </div>
      <form
        className="api-key-form"
        onSubmit={(event) => {
          event.preventDefault();
          create.mutate({ name, scopes: scopes as (typeof API_KEY_SCOPES)[number][] });
        }}
      >
        <label>
          Name{" "}
          <input
            name="api-key-name"
            value={name}
            required
            maxLength={100}
            onChange={(e) => setName(e.target.value)}
          />
        </label>
        <fieldset>
          <legend>Scopes</legend>
          {API_KEY_SCOPES.map((scope) => (
            <label key={scope} className="scope">
              <input
                type="checkbox"
                name="scope"
                value={scope}
                checked={scopes.includes(scope)}
                onChange={(e) =>
                  setScopes(
                    e.target.checked ? [...scopes, scope] : scopes.filter((s) => s !== scope),
                  )
                }
              />{" "}
              {scope}
            </label>
          ))}
        </fieldset>
        <button type="submit" className="button primary" disabled={create.isPending}>
          {create.isPending ? "Creating…" : "Create API key"}
        </button>
      </form>
      {create.isError && (
        <p className="form-error" role="alert">
          {errorMessage(create.error)}
        </p>
      )}
      {create.data && (
        <div className="token-box" role="status" data-testid="api-key">
          <p>
            API key <strong>{create.data.name}</strong> — shown once, copy it now. Send it as{" "}
            <code>Authorization: Bearer …</code>.
          </p>
          <div className="token-row">
            <code className="token" data-testid="api-key-value">
              {create.data.secret}
            </code>
            <button type="button" className="button" onClick={() => create.reset()}>
              Done
            </button>
          </div>
        </div>
      )}
      <QueryTable
        testId="api-keys-table"
        columns={COLUMNS}
        query={keys}
        noun="API keys"
        empty={<>No API keys yet.</>}
      >
        {(rows) =>
          rows.map((k) => (
            <tr key={k.id} data-testid="api-key-row">
              <td className="strong">{k.name}</td>
              <td className="mono">thaw_{k.prefix}_…</td>
              <td>{k.scopes.join(", ")}</td>
              <td>
                {k.lastUsedAt
                  ? `${formatAge((Date.now() - k.lastUsedAt.getTime()) / 1000)} ago`
                  : "never"}
              </td>
              <td>
                {k.revokedAt
                  ? "revoked"
                  : k.expiresAt && k.expiresAt < new Date()
                    ? "expired"
                    : "active"}
              </td>
              <td>
                {!k.revokedAt && (
                  <button
                    type="button"
                    className="button"
                    disabled={revoke.isPending}
                    onClick={() => revoke.mutate({ id: k.id })}
                  >
                    Revoke
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
