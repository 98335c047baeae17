"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc/client.tsx";
import { errorMessage } from "./query-state.tsx";

interface ActionableNode {
  id: string;
  name: string;
  state: string;
  credentialRevoked: boolean;
  credentialRotationPending: boolean;
}

/**
 * An admin's actions on one node, all audited: rotate its credential (the agent fetches a new
 * one at its next heartbeat), drain it (its replicas move elsewhere), revoke it (no credential
 * of it is accepted; it is drained), and a join token bound to it, for a host that lost its
 * credential or was revoked to join again as this node. Drain and revoke ask once more.
 */
export function NodeActions({ node }: { node: ActionableNode }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const refresh = () => queryClient.invalidateQueries(trpc.fleet.nodes.queryFilter());
  const rotate = useMutation(trpc.fleet.rotateCredential.mutationOptions({ onSuccess: refresh }));
  const drain = useMutation(trpc.fleet.drain.mutationOptions({ onSuccess: refresh }));
  const revoke = useMutation(trpc.fleet.revoke.mutationOptions({ onSuccess: refresh }));
  const rejoin = useMutation(trpc.fleet.createJoinToken.mutationOptions());
  const [confirming, setConfirming] = useState<"drain" | "revoke" | null>(null);
  const failed = [rotate, drain, revoke, rejoin].find((m) => m.isError);
  const busy = [rotate, drain, revoke, rejoin].some((m) => m.isPending);

  return (
    <div className="node-actions" data-testid="node-actions">
      {confirming ? (
        <div className="token-row">
          <span>
            {confirming === "revoke"
              ? `Revoke ${node.name}? Its agent is cut off until it joins with a token made for it.`
              : `Drain ${node.name}? Its replicas move to other nodes.`}
          </span>
          <button
            type="button"
            className="button danger"
            disabled={busy}
            onClick={() => {
              (confirming === "revoke" ? revoke : drain).mutate({ nodeId: node.id });
              setConfirming(null);
            }}
          >
            {confirming === "revoke" ? "Revoke" : "Drain"}
          </button>
          <button type="button" className="button" onClick={() => setConfirming(null)}>
            Cancel
          </button>
        </div>
      ) : (
        <div className="token-row">
          {!node.credentialRevoked && (
            <button
              type="button"
              className="button"
              disabled={busy || node.credentialRotationPending}
              title="The agent fetches a new credential at its next heartbeat"
              onClick={() => rotate.mutate({ nodeId: node.id })}
            >
              {node.credentialRotationPending ? "Rotating…" : "Rotate credential"}
            </button>
          )}
          {node.state !== "draining" && (
            <button
              type="button"
              className="button"
              disabled={busy}
              onClick={() => setConfirming("drain")}
            >
              Drain
            </button>
          )}
          {!node.credentialRevoked && (
            <button
              type="button"
              className="button"
              disabled={busy}
              onClick={() => setConfirming("revoke")}
            >
              Revoke
            </button>
          )}
          <button
            type="button"
            className="button"
            disabled={busy}
            title="A one-time token that lets this node's host join again as this node"
            onClick={() => rejoin.mutate({ ttlSeconds: 3600, nodeId: node.id })}
          >
            Rejoin token
          </button>
        </div>
      )}
      {failed && (
        <p className="form-error" role="alert">
          {errorMessage(failed.error)}
        </p>
      )}
      {rejoin.data && (
        <div className="token-box" role="status" data-testid="rejoin-token">
          <p>
            Join token for {node.name} only (shown once, expires{" "}
            {rejoin.data.expiresAt.toLocaleTimeString()}): put it in the host&apos;s{" "}
            <code>THAW_JOIN_TOKENS_FILE</code> and restart its agent.
          </p>
          <div className="token-row">
            <code className="token" data-testid="rejoin-token-value">
              {rejoin.data.token}
            </code>
            <button type="button" className="button" onClick={() => rejoin.reset()}>
              Done
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
