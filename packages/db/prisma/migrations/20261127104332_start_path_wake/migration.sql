-- AlterEnum: the wake path (a sleeping engine woken on its host), between warm and restore as
-- the vocabulary orders paths, fastest when possible first.
ALTER TYPE "StartPath" ADD VALUE 'wake' BEFORE 'restore';
