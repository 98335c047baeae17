import { cidrListEnv, DEFAULT_RETENTION_DAYS, snapshotStoreProblem } from "@thaw/core";
import {
  databaseUrlEnv,
  logLevelEnv,
  metricsTokenEnv,
  otlpEndpointEnv,
  otlpHeadersEnv,
  presentEnv,
  queuePrefixEnv,
  redisUrlEnv,
  credentialsKeyEnv,
  ecrEndpointEnv,
} from "@thaw/core/env";
import { webhookTrustedHostsEnv } from "@thaw/core";
import { AgentCallPrivateKeyEnv } from "@thaw/node-agent-client";
import { z } from "zod";

// The scheduler's environment, parsed once at boot (ARCHITECTURE.md §7).
const Env = z.object({
  DATABASE_URL: databaseUrlEnv,
  REDIS_URL: redisUrlEnv,
  /** Prefix of every BullMQ key; tests use their own to stay apart. */
  THAW_QUEUE_PREFIX: queuePrefixEnv,
  /**
   * The scheduler's Ed25519 key for calling agents (base64 PKCS#8 DER, or PEM): every call is
   * signed with it, and agents learn its public half (THAW_AGENT_CALL_PUBLIC_KEY, the web
   * app's) when they join. Only schedulers hold it.
   */
  THAW_AGENT_CALL_KEY: AgentCallPrivateKeyEnv,
  THAW_SCHEDULER_ID: z.string().min(1).max(128).optional(),
  /** The fleet policy and provider (JSON file); unset: hosts join by hand. */
  THAW_FLEET_CONFIG: z.string().min(1).optional(),
  /** The sim cloud's shared secret, for the `sim` fleet provider. */
  THAW_SIM_CLOUD_TOKEN: z.string().min(16, "must be at least 16 characters long").optional(),
  /** GPUs an org's warm pools may hold idle beyond minReplicas (0: scaled-down replicas stop). */
  THAW_WARM_POOL_GPU_BUDGET: z.coerce.number().int().min(0).default(0),
  /**
   * How the warm pool chooses its windows: by expected cost at each endpoint's price of a
   * second of wait (the default), or the hybrid histogram rule of Shahrad et al. with the two
   * settings below (an operator's fallback, and what the tests that pin windows use).
   */
  THAW_WARM_POOL_WINDOWS: z.enum(["expected-cost", "hybrid-histogram"]).default("expected-cost"),
  /** Hybrid windows only: the fixed keep-alive (Shahrad et al.'s fallback), before the miss-cost weight. */
  THAW_WARM_POOL_KEEP_ALIVE_SECONDS: z.coerce.number().positive().optional(),
  /** Hybrid windows only: a miss this long or longer gets the whole keep-alive window. */
  THAW_WARM_POOL_FULL_VALUE_MISS_SECONDS: z.coerce.number().positive().optional(),
  /**
   * Networks (CIDRs) where node agents may be (the web app's setting): an agent address
   * outside them is never dialled. Unset: the join already checked the address.
   */
  THAW_AGENT_CIDRS: cidrListEnv("e.g. 10.0.0.0/16"),
  /** Days scale events, and replicas stopped or failed (with their starts), are kept. */
  THAW_RETENTION_DAYS: z.coerce.number().int().min(1).max(3_650).default(DEFAULT_RETENTION_DAYS),
  /**
   * The operator's OCI repository for snapshots (e.g. an ECR repository the operator owns):
   * checkpoints are pushed there and restored from it by digest, never to or from a tenant's
   * registry. Unset: no snapshots are captured (the restore path is unavailable).
   */
  THAW_SNAPSHOT_REGISTRY: z
    .string()
    .optional()
    .transform((value) => value?.trim() || undefined)
    .superRefine((value, ctx) => {
      const problem = value === undefined ? null : snapshotStoreProblem(value);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
  /** Seals the orgs' registry credentials (see core's credentialsKeyEnv). */
  THAW_CREDENTIALS_KEY: credentialsKeyEnv,
  THAW_ECR_ENDPOINT: ecrEndpointEnv,
  /** Webhook receivers the operator trusts although private (see core's webhookTrustedHostsEnv). */
  THAW_WEBHOOK_TRUSTED_HOSTS: webhookTrustedHostsEnv,
  /**
   * The operator's bearer token for GET /metrics (Prometheus) on THAW_METRICS_PORT; unset:
   * no metrics server. The web app's /api/metrics takes the same variable.
   */
  THAW_METRICS_TOKEN: metricsTokenEnv,
  THAW_METRICS_HOST: z.string().min(1).default("0.0.0.0"),
  /** 0 picks a free port (tests). */
  THAW_METRICS_PORT: z.coerce.number().int().min(0).max(65_535).default(9465),
  /** Distinct endpoint ids the cold-start counter labels by before they share "_other". */
  THAW_METRICS_MAX_ENDPOINTS: z.coerce.number().int().min(0).max(10_000).default(500),
  /** Cold starts as OpenTelemetry traces, over OTLP/HTTP to this collector (unset: none). */
  OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpointEnv,
  OTEL_EXPORTER_OTLP_HEADERS: otlpHeadersEnv,
  OTEL_SERVICE_NAME: z.string().min(1).default("thaw-scheduler"),
  LOG_LEVEL: logLevelEnv,
});
export type SchedulerEnv = z.infer<typeof Env>;

export function loadEnv(source: NodeJS.ProcessEnv = process.env): SchedulerEnv {
  const parsed = Env.safeParse(presentEnv(source));
  if (!parsed.success) {
    const lines = parsed.error.issues.map(
      (i) =>
        `  ${i.path.join(".") || "(env)"}: ${i.message === "Invalid input: expected string, received undefined" ? "is not set" : i.message}`,
    );
    throw new Error(
      `scheduler: bad environment\n${lines.join("\n")}\nRun 'bash infra/dev/services.sh' and source .data/services.env, or set them yourself.`,
    );
  }
  return parsed.data;
}
