-- A conversation's turn was guarded by a lease on the conversation; now by this unique index over
-- its active runs. A database from before may hold more than one active run of a conversation (a
-- turn lease that ran out before its run's): all but the latest end interrupted, as recovery would.
UPDATE "runs" SET "status" = 'interrupted', "error" = 'Run interrupted: the service stopped', "ended_at" = "created_at", "lease_owner" = NULL, "lease_until" = NULL
WHERE "conversation_id" IS NOT NULL AND "status" IN ('queued', 'running', 'waiting_approval') AND EXISTS (
  SELECT 1 FROM "runs" AS "later"
  WHERE "later"."conversation_id" = "runs"."conversation_id" AND "later"."status" IN ('queued', 'running', 'waiting_approval')
    AND ("later"."created_at" > "runs"."created_at" OR ("later"."created_at" = "runs"."created_at" AND "later"."id" > "runs"."id"))
);--> statement-breakpoint
CREATE UNIQUE INDEX `runs_conversation_active_idx` ON `runs` (`conversation_id`) WHERE "runs"."status" in ('queued', 'running', 'waiting_approval');--> statement-breakpoint
ALTER TABLE `conversations` DROP COLUMN `busy_token`;--> statement-breakpoint
ALTER TABLE `conversations` DROP COLUMN `busy_until`;