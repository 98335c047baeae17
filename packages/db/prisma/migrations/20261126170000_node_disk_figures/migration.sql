-- Hosts report their real disks (issue 19): the data volume the fleet provider provisioned,
-- and what the agent measured on it at first boot. All nullable: hosts joined before, hosts
-- joined by hand and agents that do not probe keep their instance profile's figures.

-- AlterTable
ALTER TABLE "Node" ADD COLUMN     "volumeThroughputMiBps" INTEGER,
ADD COLUMN     "volumeIops" INTEGER,
ADD COLUMN     "measuredDiskReadMiBps" DOUBLE PRECISION,
ADD COLUMN     "measuredDiskWriteMiBps" DOUBLE PRECISION,
ADD COLUMN     "diskMeasuredAt" TIMESTAMP(3);
