"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc/client.tsx";
import { formatAge } from "./format.ts";
import { errorMessage } from "./query-state.tsx";
import { QueryTable } from "./query-table.tsx";

const COLUMNS = ["Registry", "Kind", "User", "Changed", ""];

/**
 * The org's registry credentials: images in those registries are inspected and pulled with
 * them. The secret is sent once and never shown again (the server seals it and answers only
 * the registry, the kind and the user).
 */
export function RegistryCredentialsCard() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.registryCredentials.list.queryOptions());
  const refresh = () => queryClient.invalidateQueries(trpc.registryCredentials.list.queryFilter());
  const put = useMutation(
    trpc.registryCredentials.put.mutationOptions({
      onSuccess: () => {
        setSecret("");
        void refresh();
      },
    }),
  );
  const remove = useMutation(
    trpc.registryCredentials.delete.mutationOptions({ onSuccess: refresh }),
  );
  const [kind, setKind] = useState<"basic" | "ecr" | "huggingface">("basic");
  const [registry, setRegistry] = useState("");
  const [username, setUsername] = useState("");
  const [secret, setSecret] = useState("");

  return (
    <section className="card" aria-labelledby="registry-credentials-title">
      <div className="card-head">
        <h2 id="registry-credentials-title">Registry credentials</h2>
      </div>
      <p className="muted small">
        Private images are inspected and pulled with these. A basic credential is a user and a
        password or access token; an ECR credential is an AWS access key allowed
        ecr:GetAuthorizationToken, traded for a 12-hour registry token at each use; a Hugging Face
        token sizes gated and private hf:// models.
      </p>
      <form
        className="api-key-form"
        data-testid="registry-credential-form"
        onSubmit={(event) => {
          event.preventDefault();
          put.mutate(
            kind === "huggingface" ? { kind, secret } : { kind, registry, username, secret },
          );
        }}
      >
        <label>
          Kind{" "}
          <select
            name="registry-kind"
            value={kind}
            onChange={(e) => setKind(e.target.value as "basic" | "ecr" | "huggingface")}
          >
            <option value="basic">basic (user + password or token)</option>
            <option value="ecr">ECR (AWS access key)</option>
            <option value="huggingface">Hugging Face token (gated models)</option>
          </select>
        </label>
        {kind !== "huggingface" && (
          <label>
            Registry{" "}
            <input
              name="registry-host"
              value={registry}
              required
              placeholder={
                kind === "ecr" ? "123456789012.dkr.ecr.us-east-1.amazonaws.com" : "ghcr.io"
              }
              onChange={(e) => setRegistry(e.target.value)}
            />
          </label>
        )}
        {kind !== "huggingface" && (
          <label>
            {kind === "ecr" ? "Access key id" : "User"}{" "}
            <input
              name="registry-username"
              value={username}
              required
              autoComplete="off"
              onChange={(e) => setUsername(e.target.value)}
            />
          </label>
        )}
        <label>
          {kind === "ecr"
            ? "Secret access key"
            : kind === "huggingface"
              ? "Token"
              : "Password or token"}{" "}
          <input
            name="registry-secret"
            type="password"
            value={secret}
            required
            autoComplete="new-password"
            onChange={(e) => setSecret(e.target.value)}
          />
        </label>
        <button type="submit" className="button primary" disabled={put.isPending}>
          {put.isPending ? "Saving…" : "Save credential"}
        </button>
      </form>
      {put.isError && (
        <p className="form-error" role="alert">
          {errorMessage(put.error)}
        </p>
      )}
      <QueryTable
        testId="registry-credentials-table"
        columns={COLUMNS}
        query={{ ...list, data: list.data?.registryCredentials }}
        noun="registry credentials"
        empty={<>No registry credentials: only public images can be deployed.</>}
      >
        {(rows) =>
          rows.map((c) => (
            <tr key={c.id} data-testid="registry-credential-row">
              <td className="strong mono">{c.registry}</td>
              <td>{c.kind}</td>
              <td className="mono">{c.username}</td>
              <td>{formatAge((Date.now() - Date.parse(c.updatedAt)) / 1000)} ago</td>
              <td>
                <button
                  type="button"
                  className="button"
                  disabled={remove.isPending}
                  onClick={() => remove.mutate({ registry: c.registry })}
                >
                  Remove
                </button>
              </td>
            </tr>
          ))
        }
      </QueryTable>
    </section>
  );
}
