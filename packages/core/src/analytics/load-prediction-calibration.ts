import type { Db } from "@thaw/db";
import {
  CALIBRATION_STARTS,
  predictionCalibration,
  type PredictionCalibration,
} from "./prediction-calibration.ts";

/**
 * The calibration of one endpoint's predictions over its most recent succeeded starts that
 * have a stored interval (the (endpointId, requestedAt) index bounds the read). The caller
 * has authorised the actor and found the endpoint in its org.
 */
export async function loadPredictionCalibration(
  db: Db,
  orgId: string,
  endpointId: string,
): Promise<PredictionCalibration> {
  const recent = await db.coldStart.findMany({
    where: {
      orgId,
      endpointId,
      status: "succeeded",
      actualSeconds: { not: null },
      predictedP10Seconds: { not: null },
      predictedP90Seconds: { not: null },
    },
    orderBy: { requestedAt: "desc" },
    take: CALIBRATION_STARTS,
    select: {
      status: true,
      actualSeconds: true,
      predictedP10Seconds: true,
      predictedP90Seconds: true,
    },
  });
  return predictionCalibration(recent);
}
