-- AlterEnum: a replica the warm pool puts to sleep (its keep-alive over), while the agent does it.
ALTER TYPE "ReplicaDrainIntent" ADD VALUE 'sleep_candidate' AFTER 'keep_alive_over';
