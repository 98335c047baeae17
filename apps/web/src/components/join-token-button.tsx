"use client";

import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc/client.tsx";
import { errorMessage } from "./query-state.tsx";

/** Issues a one-time join token; the secret is shown once and never stored in the browser. */
export function JoinTokenButton() {
  const trpc = useTRPC();
  const create = useMutation(trpc.fleet.createJoinToken.mutationOptions());
  const [copied, setCopied] = useState(false);

  return (
    <div className="join-token">
      <button
        type="button"
        className="button primary"
        disabled={create.isPending}
        onClick={() => {
          setCopied(false);
          create.mutate({ ttlSeconds: 3600 });
        }}
      >
        {create.isPending ? "Creating…" : "Create join token"}
      </button>
      {create.isError && (
        <p className="form-error" role="alert">
          {errorMessage(create.error)}
        </p>
      )}
      {create.data && (
        <div className="token-box" role="status" data-testid="join-token">
          <p>
            Join token (shown once, expires {create.data.expiresAt.toLocaleTimeString()}): give it
            to a new agent as a line of its <code>THAW_JOIN_TOKENS_FILE</code>.
          </p>
          <div className="token-row">
            <code className="token" data-testid="join-token-value">
              {create.data.token}
            </code>
            <button
              type="button"
              className="button"
              onClick={() => {
                void navigator.clipboard.writeText(create.data.token).then(() => setCopied(true));
              }}
            >
              {copied ? "Copied" : "Copy"}
            </button>
            <button type="button" className="button" onClick={() => create.reset()}>
              Done
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
