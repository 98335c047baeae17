import type { DbClient } from "@thaw/db";
import type { Offering } from "../fleet-provisioning/plan-fleet-change.ts";
import { recordWebhookEvents } from "./record-webhook-event.ts";

const offeringOf = (o: Offering) => ({
  instanceType: o.instanceType,
  zone: o.zone,
  gpuModel: o.gpuModel,
  priceUsdPerHour: o.priceUsdPerHour,
});

/**
 * `capacity.fallback`: the fleet launched a host on another offering than the one it planned
 * (the provider had no capacity there), at the price of the one it got. Keyed on the host's
 * node, so a retried fleet job records it once. Returns the deliveries written.
 */
export async function recordCapacityFallback({
  db,
  orgId,
  nodeId,
  requested,
  launched,
  unavailable,
}: {
  db: DbClient;
  orgId: string;
  nodeId: string;
  requested: Offering;
  launched: Offering;
  unavailable: readonly { offering: Offering; reason: string }[];
}): Promise<string[]> {
  return recordWebhookEvents(db, [
    {
      orgId,
      type: "capacity.fallback",
      key: nodeId,
      data: {
        nodeId,
        requested: offeringOf(requested),
        launched: offeringOf(launched),
        unavailable: unavailable.map((u) => ({ ...offeringOf(u.offering), reason: u.reason })),
      },
    },
  ]);
}
