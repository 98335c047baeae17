-- The price of waiting (issue 15): per endpoint, an org default, and the org's warm-pool GPU
-- budget. A null falls back to the next level (org default, platform default, operator's env).
ALTER TABLE "Org" ADD COLUMN "gpuSecondsPerWaitSecond" DOUBLE PRECISION,
ADD COLUMN "warmPoolGpuBudget" INTEGER;

ALTER TABLE "Endpoint" ADD COLUMN "gpuSecondsPerWaitSecond" DOUBLE PRECISION;

-- The chosen option's predicted mean and p10–p90 interval, kept beside the objective's figure
-- so the dashboard can show the interval and the predictor's calibration.
ALTER TABLE "ColdStart" ADD COLUMN "predictedMeanSeconds" DOUBLE PRECISION,
ADD COLUMN "predictedP10Seconds" DOUBLE PRECISION,
ADD COLUMN "predictedP90Seconds" DOUBLE PRECISION;
