-- The warm pool's miss-cost prediction, shared by every scheduler process (and kept across
-- restarts) until it is due again, instead of each process predicting every endpoint itself.
-- AlterTable
ALTER TABLE "EndpointWarmPool" ADD COLUMN     "bestNonWarmFreshUntil" TIMESTAMP(3),
ADD COLUMN     "bestNonWarmPredictedFor" UUID,
ADD COLUMN     "bestNonWarmPredictedSeconds" DOUBLE PRECISION;

