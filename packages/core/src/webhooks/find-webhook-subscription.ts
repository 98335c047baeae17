import type { Db } from "@thaw/db";
import { orgScope, type Actor } from "../auth/index.ts";
import { AppError, parseInput } from "../errors/index.ts";
import { WebhookId } from "./webhook-spec.ts";

/** The actor's org's subscription by id; a malformed id is a 400, another org's (or none) a 404. */
export async function findWebhookSubscription(db: Db, actor: Actor, id: unknown, field = "id") {
  const webhookId = parseInput(WebhookId, id, field);
  const row = await db.webhookSubscription.findFirst({
    where: { ...orgScope(actor), id: webhookId },
  });
  if (!row) throw new AppError("NOT_FOUND", `${field}: no such webhook in this org`, { field });
  return row;
}
