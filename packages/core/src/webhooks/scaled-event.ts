import type { WebhookEvent } from "./record-webhook-event.ts";

/** `endpoint.scaled` for a scale event just written (by a person, a key, or the autoscaler). */
export function scaledEvent(
  row: {
    id: string;
    orgId: string;
    endpointId: string;
    source: string;
    previousDesired: number;
    desired: number;
    reason: string;
    createdAt: Date;
  },
  slug: string,
): WebhookEvent {
  return {
    orgId: row.orgId,
    type: "endpoint.scaled",
    key: row.id,
    at: row.createdAt,
    data: {
      endpointId: row.endpointId,
      endpointSlug: slug,
      scaleEventId: row.id,
      source: row.source,
      previousReplicas: row.previousDesired,
      desiredReplicas: row.desired,
      reason: row.reason,
    },
  };
}
