import { describe, expect, it } from "vitest";
import { resolveFleetPolicy } from "./fleet-policy.ts";

describe("resolveFleetPolicy", () => {
  it("fills GPU model and count from the instance type's profile, and the timings' defaults", () => {
    const result = resolveFleetPolicy({
      provider: "sim",
      offerings: [{ instanceType: "g6e.xlarge", zone: "sim-a", priceUsdPerHour: 1.86 }],
    });
    expect(result).toEqual({
      ok: true,
      policy: {
        provider: "sim",
        offerings: [
          {
            instanceType: "g6e.xlarge",
            zone: "sim-a",
            priceUsdPerHour: 1.86,
            gpuModel: "L40S",
            gpusPerHost: 1,
          },
        ],
        idleCooldownSeconds: 600,
        pendingGraceSeconds: 10,
        // An org without a spend cap of its own is still capped (issue 23, finding 8).
        defaultSpendCapUsdPerHour: 50,
        maxLaunchesPerDecision: 8,
        unavailableTtlSeconds: 900,
        launchGraceSeconds: 900,
        bootSeconds: 90,
      },
    });
  });

  it("asks for the GPU of an instance type it does not know, and names bad fields", () => {
    expect(
      resolveFleetPolicy({
        provider: "aws",
        offerings: [{ instanceType: "g7.mystery", zone: "us-east-1a", priceUsdPerHour: 3 }],
      }),
    ).toEqual({
      ok: false,
      errors: [
        "offerings.0: g7.mystery is not a known GPU instance type; give gpuModel and gpusPerHost",
      ],
    });
    const bad = resolveFleetPolicy({ provider: "gcp", offerings: [], idleCooldownSeconds: -1 });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.errors.map((e) => e.split(":")[0])).toEqual([
      "provider",
      "offerings",
      "idleCooldownSeconds",
    ]);
  });
});
