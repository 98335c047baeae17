-- AlterTable
ALTER TABLE "Endpoint" ALTER COLUMN "allowedPaths" SET DEFAULT ARRAY['warm', 'wake', 'restore', 'lazy', 'pull']::"StartPath"[];


-- An endpoint that lets the warm pool park replicas lets them sleep too: waking a sleeping
-- engine is parking that holds host memory instead of GPUs. Endpoints that excluded warm keep
-- their choice.
UPDATE "Endpoint"
SET "allowedPaths" = array_append("allowedPaths", 'wake'::"StartPath")
WHERE 'warm' = ANY ("allowedPaths") AND NOT ('wake' = ANY ("allowedPaths"));
