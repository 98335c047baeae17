import { type HostIdentity } from "../host/membership.ts";

/** The zone of the fixed sim fleet (THAW_SIM_HOSTS); the sim cloud launches into the zone asked. */
export const SIM_FLEET_ZONE = "sim-a";

/**
 * Where a simulated host says it is at join: provider `sim`, and unless the sim cloud
 * launched it (which names both), the fixed fleet's zone and `sim-{name}` as its instance id.
 */
export function simHostIdentity(
  name: string,
  launched?: { zone: string; instanceId: string },
): Pick<HostIdentity, "provider" | "zone" | "instanceId"> {
  return {
    provider: "sim",
    zone: launched?.zone ?? SIM_FLEET_ZONE,
    instanceId: launched?.instanceId ?? `sim-${name}`,
  };
}
