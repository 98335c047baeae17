import { z } from "zod";
import { cidrListEnv, webhookTrustedHostsEnv } from "@thaw/core";
import {
  databaseUrlEnv,
  logLevelEnv,
  presentEnv,
  queuePrefixEnv,
  redisUrlEnv,
  credentialsKeyEnv,
  metricsTokenEnv,
  otlpEndpointEnv,
  otlpHeadersEnv,
  ecrEndpointEnv,
} from "@thaw/core/env";

// The web app's environment, parsed once (ARCHITECTURE.md §7). This is the only file in src/ that
// reads process.env. Parsing is lazy: `next build` imports route modules to collect page
// data, and the build must not need production secrets. The server validates at start
// (src/instrumentation.ts) and refuses to boot with a message naming the variable.

const WebEnv = z
  .object({
    NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
    DATABASE_URL: databaseUrlEnv,
    REDIS_URL: redisUrlEnv.optional(),
    /** BullMQ key prefix; the same as the scheduler's THAW_QUEUE_PREFIX. */
    THAW_QUEUE_PREFIX: queuePrefixEnv,
    BETTER_AUTH_SECRET: z
      .string({
        error: "is required (at least 32 random characters; e.g. `openssl rand -base64 32`)",
      })
      .min(32, "must be at least 32 characters long"),
    /**
     * The scheduler's public key (THAW_AGENT_CALL_KEY's): joins answer it, and agents accept
     * only calls signed with the private half. The web tier holds no key that could issue a
     * node's credential or sign a call to an agent.
     */
    THAW_AGENT_CALL_PUBLIC_KEY: z
      .string({
        error:
          "is required: the public half of the scheduler's THAW_AGENT_CALL_KEY (`openssl pkey -in key.pem -pubout -outform DER | base64 -w0`; infra/dev/start.sh makes both)",
      })
      .trim()
      // An Ed25519 SPKI in DER is a fixed 12-byte header and the 32-byte key: checked by its
      // shape here (this file is also compiled for the edge), parsed by every agent that joins.
      .regex(
        /^MCowBQYDK2VwAyEA[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/,
        "must be an Ed25519 public key as base64 SPKI DER (MCowBQYDK2VwAyEA…, 60 characters): the public half of the scheduler's THAW_AGENT_CALL_KEY",
      ),
    BETTER_AUTH_URL: z
      .url({ error: "must be an absolute URL such as http://localhost:3000" })
      .default("http://localhost:3000"),
    /** REST v1 requests per API key per minute (shared by every web process through Redis). */
    THAW_REST_RATE_LIMIT_PER_MINUTE: z.coerce
      .number()
      .int("must be a whole number")
      .min(1)
      .max(1_000_000)
      .default(600),
    /**
     * REST v1 requests per org per minute, over all its keys: many keys (up to the key quota)
     * cannot multiply an org's share of the API.
     */
    THAW_REST_RATE_LIMIT_PER_ORG_PER_MINUTE: z.coerce
      .number()
      .int("must be a whole number")
      .min(1)
      .max(10_000_000)
      .default(3_000),
    /**
     * Proxies (CIDRs, comma-separated) whose X-Forwarded-For is believed: set it to the load
     * balancer's subnet. Unset: nobody's, and the TCP peer is the client.
     */
    THAW_TRUSTED_PROXIES: cidrListEnv("e.g. 10.0.0.0/8,fd00::/8"),
    /** REST and agent-API requests per client address per minute, before credentials. */
    THAW_API_RATE_LIMIT_PER_ADDRESS_PER_MINUTE: z.coerce
      .number()
      .int("must be a whole number")
      .min(1)
      .max(10_000_000)
      .default(3_000),
    /** Sign-in attempts per account per 15 minutes (a success clears the count). */
    THAW_SIGN_IN_ATTEMPTS_PER_ACCOUNT: z.coerce
      .number()
      .int("must be a whole number")
      .min(1)
      .max(10_000)
      .default(10),
    /** Sign-in attempts per client address per 15 minutes. */
    THAW_SIGN_IN_ATTEMPTS_PER_ADDRESS: z.coerce
      .number()
      .int("must be a whole number")
      .min(1)
      .max(100_000)
      .default(50),
    /** Live streams (/api/live, /api/v1/stream) one user or API key may hold open at once. */
    THAW_LIVE_STREAMS_PER_PRINCIPAL: z.coerce.number().int().min(1).max(10_000).default(8),
    /** Live streams one org may hold open at once, over all its users and keys. */
    THAW_LIVE_STREAMS_PER_ORG: z.coerce.number().int().min(1).max(100_000).default(200),
    /** What-ifs (endpoint pages, GET …/what-if) one org may have replaying at once. */
    THAW_WHAT_IF_PER_ORG: z.coerce.number().int().min(1).max(100).default(2),
    /** How long a what-if request waits for the scheduler's replay before a 503. */
    THAW_WHAT_IF_TIMEOUT_SECONDS: z.coerce.number().min(1).max(300).default(30),
    /** How often an open live stream re-checks that its user or key still has access. */
    THAW_LIVE_RECHECK_SECONDS: z.coerce.number().int().min(1).max(300).default(10),
    /**
     * Networks (CIDRs) where node agents may be: the control plane dials an agent only at an
     * IP inside them. Unset: the address each agent's join request came from.
     */
    THAW_AGENT_CIDRS: cidrListEnv("e.g. 10.0.0.0/16"),
    /** Live endpoints one org may hold. */
    THAW_ORG_MAX_ENDPOINTS: z.coerce
      .number()
      .int("must be a whole number")
      .min(1)
      .max(1_000_000)
      .default(500),
    /** Live (unrevoked, unexpired) API keys one org may hold. */
    THAW_ORG_MAX_API_KEYS: z.coerce
      .number()
      .int("must be a whole number")
      .min(1)
      .max(1_000_000)
      .default(100),
    /** The largest maxReplicas of one endpoint. */
    THAW_ORG_MAX_REPLICAS_PER_ENDPOINT: z.coerce
      .number()
      .int("must be a whole number")
      .min(1)
      .max(1_000_000)
      .default(64),
    /** GPUs one org's endpoints may reach at their maxReplicas (Σ maxReplicas × gpuCount). */
    THAW_ORG_MAX_GPUS: z.coerce
      .number()
      .int("must be a whole number")
      .min(1)
      .max(1_000_000)
      .default(256),
    /** Serve a production dashboard on plain http off loopback (closed networks only). */
    THAW_ALLOW_INSECURE_HTTP: z
      .enum(["true", "false"], { error: 'must be "true" or "false"' })
      .default("false")
      .transform((v) => v === "true"),
    /**
     * Registries (`host` or `host:port`, comma-separated) the operator trusts although their
     * address is private: deployments may name them, inspection may dial them (over plain
     * http if they do not speak https). Unset: only public registries.
     */
    THAW_TRUSTED_REGISTRIES: z
      .string()
      .default("")
      .transform((v) =>
        v
          .split(",")
          .map((h) => h.trim().toLowerCase())
          .filter(Boolean),
      )
      .pipe(
        z.array(
          z
            .string()
            .regex(/^[a-z0-9.-]+(:\d{1,5})?$/, "must be host or host:port, comma-separated"),
        ),
      ),
    /** Webhook receivers the operator trusts although private (see core's webhookTrustedHostsEnv). */
    THAW_WEBHOOK_TRUSTED_HOSTS: webhookTrustedHostsEnv,
    /** The tag suffix of an image's eStargz variant (`v1` → `v1-esgz`), as your conversion pipeline pushes it. */
    THAW_ESTARGZ_TAG_SUFFIX: z
      .string()
      .regex(/^[\w.-]{1,32}$/, "letters, digits, '_', '.' or '-'")
      .default("-esgz"),
    /** Where hf:// model sources are sized: the Hugging Face Hub, or a mirror (huggingface_hub's HF_ENDPOINT). */
    THAW_HF_ENDPOINT: z.url().default("https://huggingface.co"),
    /** The region s3:// model sources are sized in (their bucket's region answers by redirect). */
    THAW_MODEL_S3_REGION: z.string().min(1).default("us-east-1"),
    /** An S3-compatible endpoint for s3:// model sources (MinIO, moto); unset: AWS. */
    THAW_MODEL_S3_ENDPOINT: z.url().optional(),
    /** How long inspecting an image or sizing a model source may take, per request. */
    THAW_INSPECTION_TIMEOUT_SECONDS: z.coerce.number().min(1).max(120).default(10),
    /** Seals the orgs' registry credentials (see core's credentialsKeyEnv). */
    THAW_CREDENTIALS_KEY: credentialsKeyEnv,
    /** The operator's bearer token for GET /api/metrics (Prometheus); unset: it answers 404. */
    THAW_METRICS_TOKEN: metricsTokenEnv,
    /** REST calls as OpenTelemetry server spans, over OTLP/HTTP to this collector (unset: none). */
    OTEL_EXPORTER_OTLP_ENDPOINT: otlpEndpointEnv,
    OTEL_EXPORTER_OTLP_HEADERS: otlpHeadersEnv,
    OTEL_SERVICE_NAME: z.string().min(1).default("thaw-web"),
    THAW_ECR_ENDPOINT: ecrEndpointEnv,
    LOG_LEVEL: logLevelEnv,
  })
  // A production dashboard on plain http off this machine would send its session cookie (not
  // Secure: better-auth marks it so only for https) in the clear: refuse to start, say why.
  .superRefine((e, ctx) => {
    if (!URL.canParse(e.BETTER_AUTH_URL)) return; // named by its own check
    const url = new URL(e.BETTER_AUTH_URL);
    const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
    if (
      e.NODE_ENV === "production" &&
      url.protocol === "http:" &&
      !loopback &&
      !e.THAW_ALLOW_INSECURE_HTTP
    )
      ctx.addIssue({
        code: "custom",
        path: ["BETTER_AUTH_URL"],
        message:
          "is http:// on a public name: serve the dashboard over https (behind your TLS load balancer) and set the https:// URL here, or set THAW_ALLOW_INSECURE_HTTP=true for a closed network",
      });
  });
export type WebEnv = z.infer<typeof WebEnv>;

/** Thrown when the environment is missing or malformed; the message names the variable. */
export class EnvError extends Error {
  override name = "EnvError";
}

let cached: WebEnv | undefined;

/** Parses an environment; exported for tests. */
export function parseWebEnv(source: Record<string, string | undefined>): WebEnv {
  const result = WebEnv.safeParse(presentEnv(source));
  if (result.success) return result.data;
  const lines = result.error.issues.map(
    (issue) => `  ${issue.path.join(".") || "(env)"} ${issue.message}`,
  );
  throw new EnvError(`Invalid environment for @thaw/web:\n${lines.join("\n")}`);
}

/** The validated environment; parsed on first use, then cached for the process. */
export function env(): WebEnv {
  cached ??= parseWebEnv(process.env);
  return cached;
}

/** True while `next build` runs (Next sets NEXT_PHASE); the build must not need secrets. */
export function isNextBuild(): boolean {
  return process.env.NEXT_PHASE === "phase-production-build";
}
