-- AlterTable
ALTER TABLE "Endpoint" ALTER COLUMN "allowedPaths" SET DEFAULT ARRAY['warm', 'wake', 'restore', 'peer', 'lazy', 'pull']::"StartPath"[];

-- An endpoint that allows pull allows peer: a peer start pulls the same image and only takes
-- the weights (and kernel caches) from a serving replica instead of storage, falling back to
-- storage when no source answers. Endpoints that excluded pull keep their choice.
UPDATE "Endpoint"
SET "allowedPaths" = array_append("allowedPaths", 'peer'::"StartPath")
WHERE 'pull' = ANY ("allowedPaths") AND NOT ('peer' = ANY ("allowedPaths"));
