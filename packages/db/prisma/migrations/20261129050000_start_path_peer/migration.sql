-- AlterEnum: the peer path (weights and compiled-kernel caches copied from a serving replica
-- on another host), between restore and lazy as the vocabulary orders paths; its two phases
-- between load_weights and compile, where they happen.
ALTER TYPE "StartPath" ADD VALUE 'peer' BEFORE 'lazy';
ALTER TYPE "Phase" ADD VALUE 'peer_transfer' BEFORE 'compile';
ALTER TYPE "Phase" ADD VALUE 'fetch_kernel_cache' BEFORE 'compile';

-- AlterTable: the host's RDMA fabric (EFA) as the agent reports it; 0 = none, TCP only.
-- And whether its engines send and receive weights through ModelExpress at all.
ALTER TABLE "Node" ADD COLUMN     "rdmaGbps" DOUBLE PRECISION NOT NULL DEFAULT 0,
ADD COLUMN     "peerTransfer" BOOLEAN NOT NULL DEFAULT false;
