-- AlterTable
ALTER TABLE "Replica" ADD COLUMN     "prewarm" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "EndpointWarmPool" (
    "endpointId" UUID NOT NULL,
    "orgId" UUID NOT NULL,
    "histogram" JSONB NOT NULL,
    "idleSince" TIMESTAMP(3),
    "bestNonWarmSeconds" DOUBLE PRECISION NOT NULL DEFAULT 60,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "EndpointWarmPool_pkey" PRIMARY KEY ("endpointId")
);

-- CreateIndex
CREATE INDEX "EndpointWarmPool_orgId_idx" ON "EndpointWarmPool"("orgId");

-- AddForeignKey
ALTER TABLE "EndpointWarmPool" ADD CONSTRAINT "EndpointWarmPool_endpointId_fkey" FOREIGN KEY ("endpointId") REFERENCES "Endpoint"("id") ON DELETE CASCADE ON UPDATE CASCADE;

