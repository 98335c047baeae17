-- AlterEnum: a replica whose engine sleeps in its node's memory, holding no GPU (the wake path).
-- The GPU-time trigger records nothing for it: it is not among the states that hold GPUs.
ALTER TYPE "ReplicaState" ADD VALUE 'sleeping' BEFORE 'draining';

-- AlterTable
ALTER TABLE "Node" ADD COLUMN     "memoryBytes" BIGINT;

-- AlterTable
ALTER TABLE "Replica" ADD COLUMN     "sleepLevel" INTEGER,
ADD COLUMN     "sleepingBytes" BIGINT,
ADD COLUMN     "sleepingGpus" INTEGER[] DEFAULT ARRAY[]::INTEGER[];

