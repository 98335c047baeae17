import { z } from "zod";
import { HOST_PROFILES } from "../cold-start-model/host-profiles.ts";
import type { Offering } from "./plan-fleet-change.ts";

// The fleet worker's policy (THAW_FLEET_CONFIG): which offerings to launch from, in order of
// preference, and the timings of growth and shrinkage. The provider's own settings (the AWS
// account, the sim cloud) are validated where the provider lives.

const OfferingInput = z
  .object({
    instanceType: z.string().regex(/^[a-z0-9.-]+$/, "an instance type, e.g. 'g6e.xlarge'"),
    zone: z.string().min(1).max(64),
    priceUsdPerHour: z.number().positive().max(1_000),
    /** Defaults from the instance type's published profile when Thaw knows it. */
    gpuModel: z.string().min(1).max(64).optional(),
    gpusPerHost: z.int().min(1).max(16).optional(),
  })
  .strict();

export const FleetPolicy = z
  .object({
    provider: z.enum(["aws", "sim"]),
    offerings: z.array(OfferingInput).min(1).max(200),
    /** A host holding nothing for this long is retired. */
    idleCooldownSeconds: z
      .int()
      .min(0)
      .max(7 * 24 * 3600)
      .default(600),
    /**
     * A replica must have waited this long before a host is launched for it: hosts that are
     * joining (an agent restart, a fleet coming up) get to take it first.
     */
    pendingGraceSeconds: z.int().min(0).max(3_600).default(10),
    /**
     * The spend ceiling (USD per hour of running hosts) of an org that has none of its own:
     * launches stop with a visible reason past it. null means no ceiling, which an operator
     * must write down on purpose (a leaked scale key once grew a fleet from 4 to 33 hosts).
     */
    defaultSpendCapUsdPerHour: z.number().positive().max(1_000_000).nullable().default(50),
    /** Upper bound on hosts launched per decision (a bounded blast radius). */
    maxLaunchesPerDecision: z.int().min(1).max(100).default(8),
    /** An offering refused for capacity is skipped for this long. */
    unavailableTtlSeconds: z
      .int()
      .min(10)
      .max(24 * 3600)
      .default(900),
    /** A launched host must report an instance id and join within this, or it is terminated. */
    launchGraceSeconds: z
      .int()
      .min(60)
      .max(24 * 3600)
      .default(900),
    /** Simulated or expected boot time of a host (the sim provider waits this long). */
    bootSeconds: z.number().min(0).max(3_600).default(90),
  })
  .strict();
export type FleetPolicyInput = z.input<typeof FleetPolicy>;

export interface ResolvedFleetPolicy extends Omit<z.output<typeof FleetPolicy>, "offerings"> {
  offerings: Offering[];
}

const PROFILES = HOST_PROFILES as Record<
  string,
  { gpu?: { model: string; count: number } | null } | undefined
>;

/** Parses the policy and fills each offering's GPU model and count from the known profiles. */
export function resolveFleetPolicy(
  input: unknown,
): { ok: true; policy: ResolvedFleetPolicy } | { ok: false; errors: string[] } {
  const parsed = FleetPolicy.safeParse(input);
  if (!parsed.success) {
    return {
      ok: false,
      errors: parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`),
    };
  }
  const errors: string[] = [];
  const offerings = parsed.data.offerings.flatMap((o, i): Offering[] => {
    const gpu = PROFILES[o.instanceType]?.gpu;
    const gpuModel = o.gpuModel ?? gpu?.model.replace(/^NVIDIA /, "");
    const gpusPerHost = o.gpusPerHost ?? gpu?.count;
    if (!gpuModel || !gpusPerHost) {
      errors.push(
        `offerings.${i}: ${o.instanceType} is not a known GPU instance type; give gpuModel and gpusPerHost`,
      );
      return [];
    }
    return [
      {
        instanceType: o.instanceType,
        zone: o.zone,
        priceUsdPerHour: o.priceUsdPerHour,
        gpuModel,
        gpusPerHost,
      },
    ];
  });
  if (errors.length) return { ok: false, errors };
  return { ok: true, policy: { ...parsed.data, offerings } };
}
