import type { DbClient } from "@thaw/db";
import { z } from "zod";
import { recordAudit } from "../audit/index.ts";
import { assertCan, type Actor } from "../auth/index.ts";
import { AppError } from "../errors/index.ts";
import { findOperableNode } from "./find-operable-node.ts";

/** The node whose credential is being replaced, and since when. */
export const RotationRequested = z.object({
  nodeId: z.string(),
  name: z.string(),
  requestedAt: z.date(),
});
export type RotationRequested = z.infer<typeof RotationRequested>;

/**
 * An operator asks for a node's credential to be replaced. The control plane cannot hand a
 * new secret to the agent out of band, so the agent fetches it: its next heartbeat answer
 * says `rotateCredential`, the agent asks POST /api/agent/v1/credential with its current
 * credential (renewNodeCredential) and keeps the answer; the old credential stops working
 * when the new one is first used. (A credential believed stolen is revoked instead: a thief
 * could fetch the new one too.)
 */
export async function rotateNodeCredential({
  actor,
  input,
  db,
}: {
  actor: Actor;
  input: { node: string };
  db: DbClient;
}): Promise<RotationRequested> {
  assertCan(actor, "fleet:write");
  return db.$transaction(async (tx) => {
    const node = await findOperableNode(tx, actor, input.node);
    if (node.credentialRevokedAt)
      throw new AppError(
        "CONFLICT",
        `Node ${node.name} is revoked: it has no credential to rotate. Create a join token for it to let its host join again.`,
        { field: "nodeId" },
      );
    const requestedAt = new Date();
    await tx.node.update({
      where: { id: node.id },
      data: { credentialRotationRequestedAt: requestedAt },
    });
    await recordAudit(tx, actor, {
      action: "node.credential_rotation_requested",
      targetType: "node",
      targetId: node.id,
      metadata: { name: node.name },
    });
    return { nodeId: node.id, name: node.name, requestedAt };
  });
}
