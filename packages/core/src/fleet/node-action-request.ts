import { z } from "zod";

/**
 * What the dashboard's node buttons send (rotate, drain, revoke): the node by id, and for a
 * drain or revocation why, which the audit log and the node's state reason keep.
 */
export const NodeActionRequest = z
  .object({
    nodeId: z.uuid({ message: "expected a node id (UUID)" }),
    reason: z.string().trim().max(200).optional(),
  })
  .strict();

export const RotateCredentialRequest = NodeActionRequest.pick({ nodeId: true });

/** A drained or revoked node, and the endpoints with replicas on it (reconciled next). */
export const OperatedNode = z.object({
  nodeId: z.string(),
  name: z.string(),
  endpointIds: z.array(z.string()),
});
export type OperatedNode = z.infer<typeof OperatedNode>;
