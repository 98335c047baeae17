import type { DbClient } from "@thaw/db";
import type { Actor } from "../auth/index.ts";
import type { WithFollowUps } from "../queues/follow-ups.ts";
import { type OperatedNode } from "./node-action-request.ts";
import { takeNodeOutOfService } from "./take-node-out-of-service.ts";

/**
 * An operator takes a node out of service: nothing new is placed on it, and reconciling moves
 * its replicas elsewhere (they are drained and replaced, like a lost node's). Its credential
 * keeps working, so the agent still reports; the node stays draining until its host joins
 * again. Reconciling the endpoints with replicas on it follows.
 */
export function drainNode(options: {
  actor: Actor;
  input: { node: string; reason?: string | undefined };
  db: DbClient;
}): Promise<WithFollowUps<OperatedNode>> {
  return takeNodeOutOfService({
    ...options,
    defaultReason: "drained by an operator",
    auditAction: "node.drained",
    alsoSet: {},
  });
}
