-- AlterTable
ALTER TABLE "Org" ADD COLUMN     "snapshotStorageBudgetBytes" BIGINT;

-- AlterTable
ALTER TABLE "Snapshot" ADD COLUMN     "error" TEXT,
ADD COLUMN     "sourceNodeId" UUID,
ADD COLUMN     "sourceReplicaId" UUID;

