-- A replica's reason as data (issue 21): scheduling branched on Replica."pendingReason", the
-- text the dashboard shows (the warm pool matched "scaled down: warm pool may park it", rolling
-- matched "no ready node with …"). It becomes a cause for a replica that is not serving
-- ("pendingCause"), an intent for one taken out of service ("drainIntent"), and the
-- particulars the text is rendered with ("reasonDetail", core placement/replica-reason.ts).
CREATE TYPE "ReplicaPendingCause" AS ENUM ('waiting_for_capacity', 'host_launch_blocked', 'start_not_accepted', 'start_failed', 'start_refused', 'start_attempts_exhausted');

CREATE TYPE "ReplicaDrainIntent" AS ENUM ('scale_down', 'park_candidate', 'keep_alive_over', 'park_refused', 'node_drained', 'node_lost', 'snapshot_captured', 'vanished_from_node');

ALTER TABLE "Replica" ADD COLUMN "pendingCause" "ReplicaPendingCause",
ADD COLUMN "drainIntent" "ReplicaDrainIntent",
ADD COLUMN "reasonDetail" JSONB NOT NULL DEFAULT '{}';

-- Backfill, by what each text begins with. Every wording any version has written is below
-- (`<…>` is a value kept in "reasonDetail"). `\x3b` is a semicolon: no line of this file holds
-- one except at a statement's end, because Prisma's migration runner splits the script at each.
--   pendingCause
--     waiting_for_capacity      "no ready node with <gpus> free <gpuType> GPU[s]: waiting for capacity"
--                               "no feasible option: <reason> (<count>)[\x3b <reason> (<count>)]…"
--     host_launch_blocked       "waiting for a <gpuModel> host: <blockedBy>"
--     start_not_accepted        "<path> start not accepted (<failure>)\x3b trying the next-best option"
--     start_failed              "<path> start failed[ in <phase>]\x3b trying the next-best option"
--     start_refused             "<path> start refused before it was sent (<failure>)\x3b given up"
--     start_attempts_exhausted  "gave up after <attempts> failed starts"
--   drainIntent
--     scale_down                "scaled down"
--     park_candidate            "scaled down: warm pool may park it"
--     keep_alive_over           "warm pool: keep-alive over"
--     park_refused              "warm pool: park refused: <failure>"
--     node_drained              "node drained"
--     node_lost                 "node lost"
--     snapshot_captured         "stopped by the capture of snapshot <snapshotId>"
--     vanished_from_node        "parked replica no longer on its node"
-- The cause or intent follows the beginning alone, as the decisions did. A text whose
-- particulars cannot be read (one cut at 500 characters) keeps its cause, and the text itself
-- as {"note": <text>}, which the dashboard shows as it was. A text that matches none keeps no
-- cause or intent, only the note.
UPDATE "Replica" SET
  "pendingCause" = (CASE
    WHEN "pendingReason" LIKE 'no ready node with %' OR "pendingReason" LIKE 'no feasible option%'
      THEN 'waiting_for_capacity'
    WHEN "pendingReason" LIKE 'waiting for a % host: %' THEN 'host_launch_blocked'
    WHEN "pendingReason" ~ '^\w+ start not accepted ' THEN 'start_not_accepted'
    WHEN "pendingReason" ~ '^\w+ start failed' THEN 'start_failed'
    WHEN "pendingReason" ~ '^\w+ start refused before it was sent ' THEN 'start_refused'
    WHEN "pendingReason" LIKE 'gave up after %' THEN 'start_attempts_exhausted'
  END)::"ReplicaPendingCause",
  "drainIntent" = (CASE
    WHEN "pendingReason" = 'scaled down' THEN 'scale_down'
    WHEN "pendingReason" = 'scaled down: warm pool may park it' THEN 'park_candidate'
    WHEN "pendingReason" = 'warm pool: keep-alive over' THEN 'keep_alive_over'
    WHEN "pendingReason" LIKE 'warm pool: park refused: %' THEN 'park_refused'
    WHEN "pendingReason" = 'node drained' THEN 'node_drained'
    WHEN "pendingReason" = 'node lost' THEN 'node_lost'
    WHEN "pendingReason" LIKE 'stopped by the capture of snapshot %' THEN 'snapshot_captured'
    WHEN "pendingReason" = 'parked replica no longer on its node' THEN 'vanished_from_node'
  END)::"ReplicaDrainIntent"
WHERE "pendingReason" IS NOT NULL;

UPDATE "Replica" SET "reasonDetail" = COALESCE(
  CASE
    WHEN "drainIntent" IN ('scale_down', 'park_candidate', 'keep_alive_over', 'node_drained',
      'node_lost', 'vanished_from_node') THEN '{}'::jsonb
    WHEN "pendingReason" LIKE 'no ready node with %' THEN (
      SELECT jsonb_build_object('gpus', m.g[1]::int, 'gpuType', m.g[2])
      FROM regexp_match("pendingReason", '^no ready node with (\d{1,9}) free (.+?) GPUs?: waiting for capacity$') AS m(g)
      WHERE m.g IS NOT NULL)
    WHEN "pendingReason" LIKE 'no feasible option: %' THEN (
      -- Entries are "<reason> (<count>)" joined by "\x3b ", and a reason may itself hold "\x3b ":
      -- the text is split only after a count.
      SELECT jsonb_build_object('infeasible',
        jsonb_agg(jsonb_build_object('reason', e.g[1], 'count', e.g[2]::int) ORDER BY s.n))
      FROM regexp_split_to_table(substr("pendingReason", length('no feasible option: ') + 1),
          '(?<=\(\d{1,9}\))\x3b ') WITH ORDINALITY AS s(part, n)
        CROSS JOIN LATERAL regexp_match(s.part, '^(.+) \((\d{1,9})\)$') AS e(g)
      HAVING bool_and(e.g IS NOT NULL))
    WHEN "pendingCause" = 'host_launch_blocked' THEN (
      SELECT jsonb_build_object('gpuModel', m.g[1], 'blockedBy', m.g[2])
      FROM regexp_match("pendingReason", '^waiting for a (.+?) host: (.*)$') AS m(g)
      WHERE m.g IS NOT NULL)
    WHEN "pendingCause" IN ('start_not_accepted', 'start_refused') THEN (
      SELECT jsonb_build_object('path', m.g[1], 'failure', m.g[2])
      FROM regexp_match("pendingReason",
          '^(warm|restore|lazy|pull) start (?:not accepted|refused before it was sent) \((.*)\)\x3b (?:trying the next-best option|given up)$') AS m(g)
      WHERE m.g IS NOT NULL)
    WHEN "pendingCause" = 'start_failed' THEN (
      SELECT jsonb_build_object('path', m.g[1], 'phase', m.g[2])
      FROM regexp_match("pendingReason",
          '^(warm|restore|lazy|pull) start failed(?: in (\w+))?\x3b trying the next-best option$') AS m(g)
      WHERE m.g IS NOT NULL)
    WHEN "pendingCause" = 'start_attempts_exhausted' THEN (
      SELECT jsonb_build_object('attempts', m.g[1]::int)
      FROM regexp_match("pendingReason", '^gave up after (\d{1,9}) failed starts$') AS m(g)
      WHERE m.g IS NOT NULL)
    WHEN "drainIntent" = 'park_refused' THEN
      jsonb_build_object('failure', substr("pendingReason", length('warm pool: park refused: ') + 1))
    WHEN "drainIntent" = 'snapshot_captured' THEN
      jsonb_build_object('snapshotId', substr("pendingReason", length('stopped by the capture of snapshot ') + 1))
  END,
  jsonb_build_object('note', "pendingReason"))
WHERE "pendingReason" IS NOT NULL;

ALTER TABLE "Replica" DROP COLUMN "pendingReason";
