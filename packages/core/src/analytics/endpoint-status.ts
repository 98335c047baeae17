import { z } from "zod";

/** What an endpoint is doing, from its desired count and its replicas' states. */
export const EndpointStatus = z.enum(["scaled_to_zero", "ready", "scaling_up", "scaling_down"]);
export type EndpointStatus = z.infer<typeof EndpointStatus>;

export function endpointStatus(o: {
  desired: number;
  ready: number;
  warm: number;
  starting: number;
  draining: number;
}): EndpointStatus {
  if (o.ready < o.desired) return "scaling_up";
  // Warm replicas are the warm pool's idle capacity, not surplus serving replicas.
  if (o.ready > o.desired || o.starting > 0 || o.draining > 0) return "scaling_down";
  return o.desired === 0 ? "scaled_to_zero" : "ready";
}
