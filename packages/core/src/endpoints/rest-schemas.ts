import { z } from "zod";
import { CALIBRATION_STARTS, CALIBRATION_TARGET } from "../analytics/prediction-calibration.ts";
import { TIME_TO_READY_WINDOW } from "../analytics/summarize-time-to-ready.ts";
import { ColdStartStatus, ColdStartTrigger, Phase, StartPath } from "../vocabulary/index.ts";

// Response schemas of REST v1, declared once: the OpenAPI document is generated from them
// and the API tests check every answer against them.

export const ErrorResponse = z
  .object({
    error: z.object({
      code: z.string().meta({ example: "BAD_REQUEST" }),
      message: z.string(),
      details: z
        .looseObject({ field: z.string().optional() })
        .nullable()
        .meta({ description: "`field` names the input that failed, e.g. `body.replicas`." }),
    }),
  })
  .meta({ id: "Error" });

export const SetDesiredReplicasResponse = z
  .object({
    endpointId: z.uuid(),
    slug: z.string(),
    previousReplicas: z.number().int().min(0),
    desiredReplicas: z.number().int().min(0),
  })
  .meta({ id: "DesiredReplicas" });

const seconds = z.number().min(0).nullable();

const count = z.number().int().min(0);

export const PredictionCalibrationView = z
  .object({
    starts: count.meta({
      description: `Succeeded starts with a stored p10–p90 interval among the endpoint's last ${CALIBRATION_STARTS}: what the share rests on.`,
    }),
    inside: count,
    faster: count.meta({ description: "Starts that finished faster than their p10." }),
    slower: count.meta({ description: "Starts that finished slower than their p90." }),
    insideShare: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .meta({ description: "inside / starts; null with no starts." }),
    verdict: z.enum(["no-starts", "too-few-starts", "calibrated", "too-narrow", "too-wide"]).meta({
      description: `calibrated: the share is within ${CALIBRATION_TARGET.share} ± ${CALIBRATION_TARGET.tolerance} over at least ${CALIBRATION_TARGET.minStarts} starts; too-narrow: fewer land inside (the predictor is overconfident); too-wide: more do.`,
    }),
  })
  .meta({
    id: "PredictionCalibration",
    description: `How often an actual time-to-ready fell inside the p10–p90 interval predicted when the start was placed: ${CALIBRATION_TARGET.share * 100}% for a calibrated predictor.`,
  });

export const EndpointStatusResponse = z
  .object({
    endpoint: z.object({ id: z.uuid(), slug: z.string() }),
    desiredReplicas: z.number().int().min(0),
    minReplicas: z.number().int().min(0),
    maxReplicas: z.number().int().min(0),
    replicas: z.object({
      ready: z.number().int().min(0),
      starting: z.number().int().min(0),
      pending: z.number().int().min(0),
      warm: z.number().int().min(0),
      draining: z.number().int().min(0),
      failed: z.number().int().min(0),
    }),
    timeToReadySeconds: z.object({ p50: seconds, p95: seconds, samples: z.number().int() }).meta({
      description: `Over the succeeded starts among the endpoint's last ${TIME_TO_READY_WINDOW} closed (succeeded or failed) cold starts, which \`samples\` counts; quantiles interpolate between ranks (PostgreSQL's percentile_cont). The dashboard shows the same figures.`,
    }),
    predictionCalibration: PredictionCalibrationView,
    lastColdStart: z
      .object({ path: StartPath, status: ColdStartStatus, requestedAt: z.iso.datetime() })
      .nullable(),
  })
  .meta({ id: "EndpointStatus" });

const timestamp = z.iso.datetime();

/** What a cold start's prediction was: the objective's figure, and the mean and interval. */
const predicted = {
  predictedSeconds: z.number().meta({
    description:
      "The figure the endpoint's objective minimised when the start was placed: the predicted mean, or the p90 for a p90 endpoint.",
  }),
  predictedMeanSeconds: z.number().min(0).nullable().meta({
    description:
      "The chosen option's predicted mean time-to-ready; null for starts placed before it was kept.",
  }),
  predictedP10Seconds: z.number().min(0).nullable().meta({
    description:
      "With predictedP90Seconds, the interval the start was predicted to finish in 80% of the time; null for starts placed before it was kept.",
  }),
  predictedP90Seconds: z.number().min(0).nullable(),
};

// Cold-start answers may grow fields (the analytics views add some): loose objects, so a
// client validating against the document keeps working.
export const ColdStartSummary = z
  .looseObject({
    id: z.uuid(),
    attempt: z.number().int().min(1),
    trigger: ColdStartTrigger,
    path: StartPath,
    locality: z.string(),
    status: ColdStartStatus,
    ...predicted,
    actualSeconds: z.number().nullable(),
    requestedAt: timestamp,
    error: z.string().nullable(),
    explored: z.boolean(),
    endpointSlug: z.string(),
    nodeName: z.string().nullable(),
  })
  .meta({ id: "ColdStartSummary" });

export const ColdStartList = z
  .object({ coldStarts: z.array(ColdStartSummary) })
  .meta({ id: "ColdStartList" });

export const ColdStartDetail = z
  .looseObject({
    id: z.uuid(),
    endpoint: z.object({ slug: z.string(), name: z.string() }),
    node: z
      .object({
        name: z.string(),
        instanceType: z.string(),
        networkGbps: z.number(),
        diskWriteMiBps: z.number(),
        diskReadMiBps: z.number(),
        pcieGBps: z.number(),
      })
      .nullable(),
    attempt: z.number().int().min(1),
    trigger: ColdStartTrigger,
    path: StartPath,
    locality: z.string(),
    status: ColdStartStatus,
    explored: z.boolean(),
    explanation: z.string(),
    ...predicted,
    actualSeconds: z.number().nullable(),
    error: z.string().nullable(),
    failedPhase: Phase.nullable(),
    requestedAt: timestamp,
    options: z
      .union([z.looseObject({}), z.array(z.unknown())])
      .meta({ description: "Every option the scheduler considered, and why each lost." }),
    phases: z.array(
      z.looseObject({
        sequence: z.number().int(),
        phase: Phase,
        startedAt: timestamp,
        seconds: z.number().nullable(),
        bytes: z.number().nullable(),
        throughputBps: z.number().nullable(),
      }),
    ),
  })
  .meta({ id: "ColdStartDetail" });
