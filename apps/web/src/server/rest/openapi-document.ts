import {
  AlertEpisodeList,
  AlertRuleList,
  AlertRuleView,
  CreateAlertRuleInput,
  ListAlertEpisodesQuery,
  UpdateAlertRuleInput,
  GpuCostQuery,
  GpuCostReport,
  WhatIfQuery,
  WhatIfReport,
  IDEMPOTENCY_KEY_RETENTION_HOURS,
  ArtifactsInspectionView,
  InspectArtifactsRequest,
  PutRegistryCredentialInput,
  RegistryCredentialList,
  RegistryCredentialView,
  RegistryHost,
  ColdStartDetail,
  ColdStartList,
  CreateEndpointInput,
  DeletedEndpoint,
  DeploymentList,
  DeploymentSpec,
  DeploymentView,
  EndpointList,
  EndpointPredictionsResponse,
  EndpointView,
  ListDeploymentsQuery,
  ListEndpointColdStartsQuery,
  UpdateEndpointInput,
  KNOWN_GPU_MODELS,
  EndpointStatusResponse,
  ErrorResponse,
  LiveEvent,
  LoadSignalBody,
  LoadSignalResponse,
  SetDesiredReplicasBody,
  SetDesiredReplicasResponse,
  CreateWebhookInput,
  ListWebhookDeliveriesQuery,
  UpdateWebhookInput,
  WEBHOOK_EVENT_TYPES,
  WebhookDeliveryList,
  WebhookDeliveryView,
  WebhookList,
  WebhookView,
  WebhookWithSecret,
} from "@thaw/core";
import { z } from "zod";
import { createDocument } from "zod-openapi";

// The REST API's OpenAPI 3.1 document, generated from the same zod schemas the routes parse
// with and answer in. Served at /api/v1/openapi.json and printed by `pnpm --silent openapi`.

const endpointParam = z.object({
  endpoint: z
    .string()
    .meta({ description: "The endpoint's slug or id.", example: "meta-llama-3-8b" }),
});
const json = (description: string, schema: z.ZodType) => ({
  description,
  content: { "application/json": { schema } },
});
const errors = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => [
      String(status),
      {
        description: ERROR_TEXT[status] ?? "Error",
        content: { "application/json": { schema: ErrorResponse } },
      },
    ]),
  );
/** A JSON request body: always required, with an example a client can send as it is. */
const body = (schema: z.ZodType, example: unknown) => ({
  required: true,
  content: { "application/json": { schema, example } },
});
const ERROR_TEXT: Record<number, string> = {
  400: "The input does not match this document (wrong type, unknown field, out of range, malformed JSON); `error.details.field` names it",
  401: "No, malformed, unknown, revoked or expired API key",
  403: "The key lacks the scope",
  404: "No such endpoint (or cold start) in the key's org",
  409: "Idempotency-Key reused for a different request, no active deployment, or the slug is taken",
  413: "Body too large",
  422: "The input matches this document but a rule the operation's description states refused it; `error.details.field` names the field",
  429: "The key spent its requests for the minute; `Retry-After` says when to retry",
};

const webhookParam = z.object({
  id: z.uuid().meta({ description: "The webhook subscription's id." }),
});
const WEBHOOK_RULES = `422: \`url\` is not https, or names a loopback, private, link-local or metadata address (unless the operator trusts the host: THAW_WEBHOOK_TRUSTED_HOSTS); every address the name resolves to is checked again when a delivery is sent. Event types: ${WEBHOOK_EVENT_TYPES.join(", ")}. Deliveries are POSTed as {type, timestamp, data}, signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature: v1,<base64 HMAC-SHA256>), and retried with exponential backoff (8 attempts over about an hour) after a 408, 429, 5xx, timeout (10 s) or network error.`;

const alertRuleParam = z.object({
  id: z.uuid().meta({ description: "The alert rule's id." }),
});
const ALERT_RULES =
  "Alerts are delivered as webhook events: subscribe a webhook to `alert.firing` and `alert.resolved` (format `slack` for a Slack-compatible incoming webhook). Each episode — a rule firing on one endpoint, per severity — sends one alert.firing when it opens and one alert.resolved when it ends.";

/** What every operation with a body does with input the document refuses. */
const SCHEMA_RULES =
  "Input that does not match this document is a 400 naming the field (`error.details.field`).";
const DEPLOYMENT_RULES =
  "`imageLayers`, when given with `imageBytes`, add up to it; `estargzDigest` needs `estargzImageRef`; `imageRef`, `estargzImageRef` and `modelSource` name no loopback, private, link-local or metadata address; engine args hold no control characters. Left out, `imageBytes`, `imageLayers` and `imageDigest` are read from the registry (and an eStargz variant tagged `<tag>-esgz` is found), and `modelBytes` and `modelFormat` (each when left out) from the model source (the Hugging Face Hub, S3, or an https HEAD); a registry or source that refuses, has no such image, or does not answer in time is a 422 naming the field.";
const DEPLOYMENT_EXAMPLE = {
  imageRef: "registry.example.com/vllm-openai:v0.12.0",
  imageBytes: 7_800_000_000,
  estargzImageRef: "registry.example.com/vllm-openai:v0.12.0-esgz",
  modelSource: "hf://Qwen/Qwen2.5-7B-Instruct",
  modelBytes: 15_200_000_000,
  modelFormat: "safetensors",
  engine: "vllm",
};

/**
 * Links from an answer that names an endpoint to every operation on it, so a client (and the
 * fuzzer's stateful phase) can follow a created endpoint through its life.
 */
function linksFromEndpoint(slug: string) {
  const operations = [
    "getEndpoint",
    "updateEndpoint",
    "listDeployments",
    "createDeployment",
    "listEndpointColdStarts",
    "setDesiredReplicas",
    "getEndpointStatus",
    "postLoadSignal",
    "getEndpointPredictions",
    "getEndpointWhatIf",
    "deleteEndpoint",
  ];
  return Object.fromEntries(
    operations.map((operationId) => [
      operationId.charAt(0).toUpperCase() + operationId.slice(1),
      { operationId, parameters: { endpoint: slug } },
    ]),
  );
}

/**
 * One server-sent event of /api/v1/stream as OpenAPI 3.1 describes an event stream: the
 * event's fields, its `data` a JSON LiveEvent (comment lines such as `: ping` carry no event).
 */
const LiveEventFrame = z
  .object({
    event: z.literal("cold_starts"),
    data: z.string().meta({
      contentMediaType: "application/json",
      contentSchema: { $ref: "#/components/schemas/LiveEvent" },
    }),
    id: z.string().optional(),
    retry: z.number().int().optional(),
  })
  .meta({ id: "LiveEventFrame" });

export function openApiDocument() {
  return createDocument({
    openapi: "3.1.0",
    info: {
      title: "Thaw REST API",
      version: "1",
      description:
        'Deploy, change, scale and delete model endpoints and read their state and cold starts. Authenticate with `Authorization: Bearer thaw_…` (an API key from the dashboard); every error answers `{"error":{"code","message","details"}}`. Each key may make THAW_REST_RATE_LIMIT_PER_MINUTE requests a minute (600 by default); answers carry RateLimit-Limit / -Remaining / -Reset.',
    },
    components: {
      securitySchemes: { apiKey: { type: "http", scheme: "bearer" } },
      schemas: { LiveEvent },
    },
    security: [{ apiKey: [] }],
    paths: {
      "/api/v1/endpoints": {
        get: {
          operationId: "listEndpoints",
          summary: "The org's endpoints with their active deployments (scope endpoints:read)",
          responses: {
            "200": json("Every live endpoint of the key's org", EndpointList),
            ...errors(401, 403, 429),
          },
        },
        post: {
          operationId: "createEndpoint",
          summary:
            "Create an endpoint with its first deployment, active at once (scope endpoints:write)",
          description: `${SCHEMA_RULES} Rules this document cannot express (422): minReplicas ≤ desiredReplicas ≤ maxReplicas; \`gpuType\` is a GPU model Thaw knows (${KNOWN_GPU_MODELS.join(", ")}) or one the org's fleet has; \`name\` holds no control characters; \`allowedPaths\` names each path once; the org's quotas hold (live endpoints, maxReplicas per endpoint, GPUs over all endpoints at their maxReplicas; the 422 names the quota in \`error.details.quota\`); ${DEPLOYMENT_RULES} 409: an endpoint with this slug exists.`,
          requestBody: body(CreateEndpointInput, {
            slug: "qwen-7b",
            name: "Qwen 2.5 7B",
            gpuType: "L40S",
            maxReplicas: 2,
            desiredReplicas: 1,
            gpuSecondsPerWaitSecond: 10,
            deployment: DEPLOYMENT_EXAMPLE,
          }),
          responses: {
            "201": {
              ...json("Created; the scheduler brings up desiredReplicas", EndpointView),
              links: linksFromEndpoint("$response.body#/slug"),
            },
            ...errors(400, 401, 403, 409, 413, 422, 429),
          },
        },
      },
      "/api/v1/endpoints/{endpoint}": {
        get: {
          operationId: "getEndpoint",
          summary: "An endpoint's configuration and active deployment (scope endpoints:read)",
          requestParams: { path: endpointParam },
          responses: {
            "200": json("The endpoint", EndpointView),
            ...errors(401, 403, 404, 429),
          },
        },
        patch: {
          operationId: "updateEndpoint",
          summary:
            "Change name, scaling bounds (desired is moved into them), start paths, objective, target concurrency, scale-to-zero delay or price of waiting (scope endpoints:write)",
          requestParams: { path: endpointParam },
          description: `${SCHEMA_RULES} At least one field. Rules this document cannot express (422): minReplicas ≤ maxReplicas once the change is applied (a bound the body leaves out keeps its current value); a raised maxReplicas stays within the org's quotas (replicas per endpoint, GPUs over all endpoints); \`name\` holds no control characters; \`allowedPaths\` names each path once. The desired count is moved into the new bounds; a \`gpuSecondsPerWaitSecond\` of null goes back to the org's default.`,
          requestBody: body(UpdateEndpointInput, {
            minReplicas: 1,
            maxReplicas: 4,
            objective: "p90",
            gpuSecondsPerWaitSecond: 20,
          }),
          responses: {
            "200": json("The endpoint as changed", EndpointView),
            ...errors(400, 401, 403, 404, 413, 422, 429),
          },
        },
        delete: {
          operationId: "deleteEndpoint",
          summary:
            "Delete an endpoint: desired 0, replicas drained, history kept, slug freed (scope endpoints:write)",
          requestParams: { path: endpointParam },
          responses: {
            "200": json("Deleted", DeletedEndpoint),
            ...errors(401, 403, 404, 429),
          },
        },
      },
      "/api/v1/endpoints/{endpoint}/deployments": {
        get: {
          operationId: "listDeployments",
          summary: "An endpoint's deployments, newest version first (scope endpoints:read)",
          requestParams: { path: endpointParam, query: ListDeploymentsQuery },
          responses: {
            "200": json("Deployments", DeploymentList),
            ...errors(400, 401, 403, 404, 429),
          },
        },
        post: {
          operationId: "createDeployment",
          summary:
            "Roll the endpoint to a new immutable version; the previous one is superseded (scope deployments:write)",
          requestParams: { path: endpointParam },
          description: `${SCHEMA_RULES} Rules this document cannot express (422): ${DEPLOYMENT_RULES}`,
          requestBody: body(DeploymentSpec, DEPLOYMENT_EXAMPLE),
          responses: {
            "201": json("The new active deployment", DeploymentView),
            ...errors(400, 401, 403, 404, 413, 422, 429),
          },
        },
      },
      "/api/v1/inspections": {
        post: {
          operationId: "inspectArtifacts",
          summary:
            "What a deployment of this image (and model) would be made from: digest, platform, layers with their uncompressed sizes and compression, the eStargz variant, the model's size, format and files. Nothing is stored (scope deployments:write)",
          description: `${SCHEMA_RULES} 422: the registry or model source refused, has no such image or model, lied about a layer's size, or did not answer in time; \`error.details.field\` names the field.`,
          requestBody: body(InspectArtifactsRequest, {
            imageRef: "vllm/vllm-openai:v0.11.0",
            modelSource: "hf://Qwen/Qwen2.5-7B-Instruct",
          }),
          responses: {
            "200": json("What the registry and the model source say", ArtifactsInspectionView),
            ...errors(400, 401, 403, 413, 422, 429),
          },
        },
      },
      "/api/v1/registry-credentials": {
        get: {
          operationId: "listRegistryCredentials",
          summary:
            "The org's registry credentials: registry, kind and user, never the secret (scope registries:manage)",
          responses: {
            "200": json("Registry credentials", RegistryCredentialList),
            ...errors(401, 403, 429),
          },
        },
        put: {
          operationId: "putRegistryCredential",
          summary:
            "Store or replace the org's credential for one registry; images there are inspected and pulled with it (scope registries:manage)",
          description: `${SCHEMA_RULES} The secret is sealed at rest and never answered. \`basic\`: a user and a password or access token. \`ecr\`: an AWS access key id and secret allowed ecr:GetAuthorizationToken, traded for a 12-hour registry token at each use. \`huggingface\`: the org's Hugging Face token (registry \`huggingface.co\`), for sizing gated and private hf:// models. 422: the registry is a loopback, private, link-local or metadata address. 503: the operator has not set THAW_CREDENTIALS_KEY.`,
          requestBody: body(PutRegistryCredentialInput, {
            kind: "basic",
            registry: "ghcr.io",
            username: "ci-bot",
            secret: "ghp_example",
          }),
          responses: {
            "200": json("The credential as stored, without its secret", RegistryCredentialView),
            ...errors(400, 401, 403, 413, 422, 429),
            "503": {
              description: "Credentials are off: THAW_CREDENTIALS_KEY is not set",
              content: { "application/json": { schema: ErrorResponse } },
            },
          },
        },
      },
      "/api/v1/registry-credentials/{registry}": {
        delete: {
          operationId: "deleteRegistryCredential",
          summary: "Forget the org's credential for a registry (scope registries:manage)",
          requestParams: { path: z.object({ registry: RegistryHost }) },
          responses: {
            "200": json("Deleted", z.object({ registry: z.string(), deleted: z.literal(true) })),
            ...errors(400, 401, 403, 404, 429),
          },
        },
      },
      "/api/v1/webhooks": {
        get: {
          operationId: "listWebhooks",
          summary:
            "The org's webhook subscriptions: URL, event types, enabled — never the secret (scope webhooks:manage)",
          responses: {
            "200": json("Webhook subscriptions", WebhookList),
            ...errors(401, 403, 429),
          },
        },
        post: {
          operationId: "createWebhook",
          summary:
            "Subscribe a URL to the org's events; the answer shows the signing secret (whsec_…) this once (scope webhooks:manage)",
          description: `${SCHEMA_RULES} ${WEBHOOK_RULES}`,
          requestBody: body(CreateWebhookInput, {
            url: "https://hooks.example.com/thaw",
            description: "on-call",
            eventTypes: ["cold_start.failed", "cold_start.slow"],
          }),
          responses: {
            "201": {
              ...json("The subscription and its secret, shown once", WebhookWithSecret),
              links: {
                GetCreatedWebhook: {
                  operationId: "getWebhook",
                  parameters: { id: "$response.body#/id" },
                  description: "The subscription just created, without its secret",
                },
                ListCreatedWebhookDeliveries: {
                  operationId: "listWebhookDeliveries",
                  parameters: { id: "$response.body#/id" },
                  description: "Its delivery log",
                },
                RotateCreatedWebhookSecret: {
                  operationId: "rotateWebhookSecret",
                  parameters: { id: "$response.body#/id" },
                  description: "A new secret for it",
                },
              },
            },
            ...errors(400, 401, 403, 413, 422, 429),
            "503": {
              description: "Webhooks are off: THAW_CREDENTIALS_KEY is not set",
              content: { "application/json": { schema: ErrorResponse } },
            },
          },
        },
      },
      "/api/v1/webhooks/{id}": {
        get: {
          operationId: "getWebhook",
          summary: "One webhook subscription, without its secret (scope webhooks:manage)",
          requestParams: { path: webhookParam },
          responses: {
            "200": json("The subscription", WebhookView),
            ...errors(400, 401, 403, 404, 429),
          },
        },
        patch: {
          operationId: "updateWebhook",
          summary:
            "Change a subscription's URL, description, event types or whether it is enabled (scope webhooks:manage)",
          description: `${SCHEMA_RULES} ${WEBHOOK_RULES}`,
          requestParams: { path: webhookParam },
          requestBody: body(UpdateWebhookInput, { enabled: false }),
          responses: {
            "200": json("The subscription as changed", WebhookView),
            ...errors(400, 401, 403, 404, 413, 422, 429),
          },
        },
        delete: {
          operationId: "deleteWebhook",
          summary: "Delete a subscription and its delivery log (scope webhooks:manage)",
          requestParams: { path: webhookParam },
          responses: {
            "200": json("Deleted", z.object({ id: z.string(), deleted: z.literal(true) })),
            ...errors(400, 401, 403, 404, 429),
          },
        },
      },
      "/api/v1/webhooks/{id}/rotate-secret": {
        post: {
          operationId: "rotateWebhookSecret",
          summary:
            "A new signing secret, shown this once; the previous one keeps signing beside it for 24 hours (scope webhooks:manage)",
          requestParams: { path: webhookParam },
          responses: {
            "200": json("The subscription and its new secret", WebhookWithSecret),
            ...errors(400, 401, 403, 404, 429),
            "503": {
              description: "Webhooks are off: THAW_CREDENTIALS_KEY is not set",
              content: { "application/json": { schema: ErrorResponse } },
            },
          },
        },
      },
      "/api/v1/webhooks/{id}/deliveries": {
        get: {
          operationId: "listWebhookDeliveries",
          summary:
            "A subscription's deliveries, newest first, each with its attempts' status codes, errors and durations (scope webhooks:manage)",
          requestParams: { path: webhookParam, query: ListWebhookDeliveriesQuery },
          responses: {
            "200": json("Deliveries", WebhookDeliveryList),
            ...errors(400, 401, 403, 404, 429),
          },
        },
      },
      "/api/v1/webhook-deliveries/{id}/redeliver": {
        post: {
          operationId: "redeliverWebhook",
          summary:
            "Send a delivery again (same webhook-id, signed afresh); 409 while it is still being tried (scope webhooks:manage)",
          requestParams: {
            path: z.object({ id: z.uuid().meta({ description: "The delivery's id." }) }),
          },
          responses: {
            "202": json("Queued again", WebhookDeliveryView),
            ...errors(400, 401, 403, 404, 409, 429),
          },
        },
      },
      "/api/v1/alert-rules": {
        get: {
          operationId: "listAlertRules",
          summary: "The org's alert rules, each with its open episodes (scope endpoints:read)",
          responses: {
            "200": json("Alert rules", AlertRuleList),
            ...errors(401, 403, 429),
          },
        },
        post: {
          operationId: "createAlertRule",
          summary:
            "A rule on one endpoint (or, without `endpoint`, all of the org's): a cold start slower than its predicted p90, or a time-to-ready SLO evaluated by multi-window burn rates (scope alerts:manage)",
          description: `${SCHEMA_RULES} 422: \`endpoint\` names no endpoint of the org, or the org keeps its most rules already. ${ALERT_RULES}`,
          requestBody: body(CreateAlertRuleInput, {
            kind: "time_to_ready_slo",
            name: "ready within 2 minutes",
            endpoint: "meta-llama-3-8b",
            thresholdSeconds: 120,
            objective: 0.95,
          }),
          responses: {
            "201": {
              ...json("The rule", AlertRuleView),
              links: {
                GetCreatedAlertRule: {
                  operationId: "getAlertRule",
                  parameters: { id: "$response.body#/id" },
                  description: "The rule just created",
                },
                UpdateCreatedAlertRule: {
                  operationId: "updateAlertRule",
                  parameters: { id: "$response.body#/id" },
                  description: "Change it",
                },
              },
            },
            ...errors(400, 401, 403, 413, 422, 429),
          },
        },
      },
      "/api/v1/alert-rules/{id}": {
        get: {
          operationId: "getAlertRule",
          summary: "One alert rule (scope endpoints:read)",
          requestParams: { path: alertRuleParam },
          responses: {
            "200": json("The rule", AlertRuleView),
            ...errors(400, 401, 403, 404, 429),
          },
        },
        patch: {
          operationId: "updateAlertRule",
          summary:
            "Rename, enable or disable a rule (disabling resolves its open episodes), or move an SLO's threshold or objective (scope alerts:manage)",
          description: `${SCHEMA_RULES} 422: \`thresholdSeconds\` or \`objective\` on a slow_cold_start rule.`,
          requestParams: { path: alertRuleParam },
          requestBody: body(UpdateAlertRuleInput, { enabled: false }),
          responses: {
            "200": json("The rule as changed", AlertRuleView),
            ...errors(400, 401, 403, 404, 413, 422, 429),
          },
        },
        delete: {
          operationId: "deleteAlertRule",
          summary: "Delete a rule and its episodes (scope alerts:manage)",
          requestParams: { path: alertRuleParam },
          responses: {
            "200": json("Deleted", z.object({ id: z.string(), deleted: z.literal(true) })),
            ...errors(400, 401, 403, 404, 429),
          },
        },
      },
      "/api/v1/alert-episodes": {
        get: {
          operationId: "listAlertEpisodes",
          summary:
            "Alert episodes, newest first: what fired, on which endpoint, when, and whether it resolved (scope endpoints:read)",
          description: ALERT_RULES,
          requestParams: { query: ListAlertEpisodesQuery },
          responses: {
            "200": json("Episodes", AlertEpisodeList),
            ...errors(400, 401, 403, 404, 429),
          },
        },
      },
      "/api/v1/endpoints/{endpoint}/cold-starts": {
        get: {
          operationId: "listEndpointColdStarts",
          summary: "An endpoint's recent cold starts, newest first (scope endpoints:read)",
          requestParams: { path: endpointParam, query: ListEndpointColdStartsQuery },
          responses: {
            "200": {
              ...json("Cold starts", ColdStartList),
              links: {
                GetNewestColdStart: {
                  operationId: "getColdStart",
                  parameters: { id: "$response.body#/coldStarts/0/id" },
                  description: "The newest cold start's phases and options",
                },
              },
            },
            ...errors(400, 401, 403, 404, 429),
          },
        },
      },
      "/api/v1/cold-starts/{id}": {
        get: {
          operationId: "getColdStart",
          summary:
            "One cold start: its phases, the options the scheduler weighed and why each lost (scope endpoints:read)",
          requestParams: {
            path: z.object({ id: z.uuid().meta({ description: "The cold start's id." }) }),
          },
          responses: {
            "200": json("The cold start", ColdStartDetail),
            ...errors(400, 401, 403, 404, 429),
          },
        },
      },
      "/api/v1/endpoints/{endpoint}/replicas": {
        put: {
          operationId: "setDesiredReplicas",
          summary: "Set the desired replica count (scope endpoints:scale)",
          requestParams: {
            path: endpointParam,
            header: z.object({
              "idempotency-key": z
                .string()
                .regex(/^[\x21-\x7e]{1,128}$/, "1–128 visible ASCII characters")
                .optional()
                .meta({
                  description: `A retry with the same key within ${IDEMPOTENCY_KEY_RETENTION_HOURS} hours gets the first answer; after that the key is forgotten.`,
                }),
            }),
          },
          description:
            "Rules this document cannot express (422): `replicas` within the endpoint's minReplicas–maxReplicas. 409: the Idempotency-Key was used before with a different body.",
          requestBody: body(SetDesiredReplicasBody, { replicas: 2 }),
          responses: {
            "200": {
              description: "Desired count recorded; the scheduler reconciles",
              content: { "application/json": { schema: SetDesiredReplicasResponse } },
            },
            ...errors(400, 401, 403, 404, 409, 413, 422, 429),
          },
        },
      },
      "/api/v1/endpoints/{endpoint}/status": {
        get: {
          operationId: "getEndpointStatus",
          summary: "Replicas by state and recent time-to-ready (scope endpoints:read)",
          requestParams: { path: endpointParam },
          responses: {
            "200": {
              description: "The endpoint's status",
              content: { "application/json": { schema: EndpointStatusResponse } },
            },
            ...errors(401, 403, 404, 429),
          },
        },
      },
      "/api/v1/stream": {
        get: {
          operationId: "streamLiveEvents",
          summary:
            "Server-sent events: `event: cold_starts` whenever the org's cold starts get phases or close (scope endpoints:read)",
          responses: {
            "200": {
              description:
                "An event stream; each `data:` line is one LiveEvent (ids to re-read through the API)",
              content: { "text/event-stream": { schema: LiveEventFrame } },
            },
            ...errors(401, 403, 429),
          },
        },
      },
      "/api/v1/endpoints/{endpoint}/signals": {
        post: {
          operationId: "postLoadSignal",
          summary:
            "Report load (in flight + queued); the KPA-style autoscaler sets the desired count (scope endpoints:scale)",
          requestParams: { path: endpointParam },
          requestBody: body(LoadSignalBody, { inFlightRequests: 12, queueDepth: 30 }),
          responses: {
            "200": {
              description: "The autoscaler's decision",
              content: { "application/json": { schema: LoadSignalResponse } },
            },
            ...errors(400, 401, 403, 404, 413, 429),
          },
        },
      },
      "/api/v1/endpoints/{endpoint}/cost": {
        get: {
          operationId: "getEndpointCost",
          summary:
            "An endpoint's GPU time and cost: serving, starting (by path), warm idle, failed starts and stopping, per hour or day (scope endpoints:read)",
          requestParams: { path: endpointParam, query: GpuCostQuery },
          responses: {
            "200": json(
              "GPU-seconds and dollars by category, with a series per bucket",
              GpuCostReport,
            ),
            ...errors(400, 401, 403, 404, 422, 429),
          },
        },
      },
      "/api/v1/endpoints/{endpoint}/what-if": {
        get: {
          operationId: "getEndpointWhatIf",
          summary:
            "What-if: the endpoint's recorded load (its load signals, per minute) replayed through the scheduler's own decisions under thaw at today's price of waiting, a sweep of prices and the default objective, and fixed pull and lazy keep-alives — each a point of mean and p99 wait against idle GPU-hours and cost, today's setting marked, and what PATCH sets to apply a thaw point (scope endpoints:read)",
          description:
            "`from`/`to` are taken to the minute; default the last 7 days, at most 14. 422: `to` not after `from` by a minute, a window longer than 14 days, `from` in the future or before 1970, or an endpoint without an active deployment. No load recorded in the window: status `no_load`, no points, and a message saying to send load signals. The replays run in the scheduler: 429 when the org already has THAW_WHAT_IF_PER_ORG (2) what-ifs replaying (`Retry-After`), 503 when no scheduler answers in time.",
          requestParams: { path: endpointParam, query: WhatIfQuery },
          responses: {
            "200": json("The frontier's points, today's setting marked", WhatIfReport),
            ...errors(400, 401, 403, 404, 422, 429),
            "503": {
              description:
                "No scheduler answered within THAW_WHAT_IF_TIMEOUT_SECONDS, or Redis is unavailable",
              content: { "application/json": { schema: ErrorResponse } },
            },
          },
        },
      },
      "/api/v1/cost": {
        get: {
          operationId: "getOrgCost",
          summary:
            "The org's GPU time and cost by category, per hour or day, and each endpoint's share (scope endpoints:read)",
          requestParams: { query: GpuCostQuery },
          responses: {
            "200": json("GPU-seconds and dollars by category, and by endpoint", GpuCostReport),
            ...errors(400, 401, 403, 422, 429),
          },
        },
      },
      "/api/v1/endpoints/{endpoint}/predictions": {
        get: {
          operationId: "getEndpointPredictions",
          summary:
            "Predicted time-to-ready of each start path right now — the scheduler's own predictor (scope endpoints:read)",
          requestParams: { path: endpointParam },
          responses: {
            "200": {
              description: "One entry per path: warm, restore, lazy, pull",
              content: { "application/json": { schema: EndpointPredictionsResponse } },
            },
            ...errors(401, 403, 404, 409, 429),
          },
        },
      },
    },
  });
}
