import { z } from "zod";

// The aws provider's settings (THAW_FLEET_CONFIG file, `aws` section). Either a launch
// template (the operator's AMI, network and instance profile in one place) or explicit
// parameters; the data volume and IMDSv2 are set by Thaw either way.

const Id = (prefix: string) =>
  z.string().regex(new RegExp(`^${prefix}-[0-9a-f]{8,17}$`), `must look like ${prefix}-0abc…`);

export const AwsFleetConfig = z
  .object({
    region: z.string().regex(/^[a-z]{2}(-[a-z]+)+-\d$/, "must be an AWS region like us-east-1"),
    /** For emulators (moto) and VPC endpoints; must be http(s). */
    endpoint: z.url({ protocol: /^https?$/ }).optional(),
    /** Tag thaw:cluster on everything launched; the garbage collector only touches these. */
    clusterName: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and dashes"),
    launchTemplate: z
      .object({
        id: Id("lt").optional(),
        name: z.string().min(3).max(128).optional(),
        version: z.string().default("$Default"),
      })
      .refine((t) => (t.id === undefined) !== (t.name === undefined), {
        message: "give exactly one of id or name",
      })
      .optional(),
    imageId: Id("ami").optional(),
    /** Subnet per availability zone: a zone with no subnet here is never used. */
    subnetIdByZone: z.record(z.string(), Id("subnet")).default({}),
    securityGroupIds: z.array(Id("sg")).default([]),
    instanceProfileArn: z.string().startsWith("arn:aws:iam::").optional(),
    /**
     * The data volume for images, snapshots and weights. gp3's default 125 MiB/s write
     * ceiling held a 13 GB cold start at 205 s instead of 41 s (field notes §1), hence the
     * provisioned 1,000 MiB/s / 16,000 IOPS. Instance types with local NVMe use RAID 0 over
     * it instead (cloud-init), and this volume is skipped for them.
     */
    dataVolume: z
      .object({
        deviceName: z.string().default("/dev/sdf"),
        sizeGiB: z.int().min(50).max(16_384).default(500),
        throughputMiBps: z.int().min(125).max(2_000).default(1_000),
        iops: z.int().min(3_000).max(80_000).default(16_000),
      })
      .prefault({}),
    /** Instance types whose local NVMe holds the data (RAID 0 in cloud-init): no EBS volume. */
    localNvmeInstanceTypes: z.array(z.string()).default(["p4d.24xlarge", "p5.48xlarge"]),
    /** SDK attempts per call; throttling backs off with jitter under the adaptive rate limiter. */
    maxAttempts: z.int().min(1).max(20).default(8),
  })
  .strict()
  .refine((c) => c.launchTemplate !== undefined || c.imageId !== undefined, {
    message: "give launchTemplate or imageId (the GPU host AMI)",
    path: ["imageId"],
  });
export type AwsFleetConfig = z.output<typeof AwsFleetConfig>;
export type AwsFleetConfigInput = z.input<typeof AwsFleetConfig>;
