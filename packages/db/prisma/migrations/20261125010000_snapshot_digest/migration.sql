-- Snapshots are restored by the digest their capture reported (issue 23, finding 13).
ALTER TABLE "Snapshot" ADD COLUMN "digest" TEXT;

-- Snapshots captured before this have no digest and were pushed to the deployment image's
-- registry, which its tenant controls: none of them can be restored safely. They are deleted,
-- with no error so that the capture backoff does not count them as failures, and new ones are
-- captured into the operator's store.
UPDATE "Snapshot" SET status = 'deleted'
WHERE digest IS NULL AND status IN ('ready', 'quarantined');
