import { z } from "zod";
import { GpuSecondsPerWaitSecond, WAIT_PRICE_MEANING } from "../endpoints/endpoint-spec.ts";
import { PLATFORM_WAIT_OBJECTIVE } from "../scheduling/wait-price.ts";

// The settings an org's admins choose for themselves (the operator's quotas are
// org-quotas.ts): the default price of waiting of the org's endpoints and the GPUs its warm
// pools may hold.

/** GPUs an org's warm pools may hold at most, as its admins may set it. */
export const MAX_WARM_POOL_GPU_BUDGET = 100_000;

export const SetOrgSettingsInput = z
  .object({
    gpuSecondsPerWaitSecond: GpuSecondsPerWaitSecond.nullable()
      .optional()
      .meta({
        description: `The default for the org's endpoints that set no price of their own. ${WAIT_PRICE_MEANING} null: ${PLATFORM_WAIT_OBJECTIVE}.`,
      }),
    warmPoolGpuBudget: z
      .number()
      .int()
      .min(0)
      .max(MAX_WARM_POOL_GPU_BUDGET)
      .nullable()
      .optional()
      .meta({
        description:
          "GPUs the org's warm pools may hold idle beyond what minReplicas forces; 0: none. null: the operator's default (the scheduler's THAW_WARM_POOL_GPU_BUDGET).",
      }),
  })
  .strict()
  .refine((s) => Object.values(s).some((v) => v !== undefined), {
    message: "name at least one setting to change (a number, or null for the default)",
  });
export type SetOrgSettingsInput = z.infer<typeof SetOrgSettingsInput>;

export const OrgSettings = z.object({
  /** The org's own default price of waiting; null: the platform's applies. */
  gpuSecondsPerWaitSecond: z.number().nullable(),
  /** The price an endpoint without its own follows, and where it comes from. */
  effectiveGpuSecondsPerWaitSecond: z.object({
    value: z.number().nullable(),
    source: z.enum(["org", "platform"]),
  }),
  /** The org's warm-pool GPU budget; null: the operator's THAW_WARM_POOL_GPU_BUDGET. */
  warmPoolGpuBudget: z.number().nullable(),
});
export type OrgSettings = z.infer<typeof OrgSettings>;

export const ORG_SETTINGS_SELECT = {
  gpuSecondsPerWaitSecond: true,
  warmPoolGpuBudget: true,
} as const;

export function toOrgSettings(row: {
  gpuSecondsPerWaitSecond: number | null;
  warmPoolGpuBudget: number | null;
}): OrgSettings {
  return {
    gpuSecondsPerWaitSecond: row.gpuSecondsPerWaitSecond,
    effectiveGpuSecondsPerWaitSecond:
      row.gpuSecondsPerWaitSecond === null
        ? { value: null, source: "platform" }
        : { value: row.gpuSecondsPerWaitSecond, source: "org" },
    warmPoolGpuBudget: row.warmPoolGpuBudget,
  };
}
