ALTER TABLE "approval_grants" ALTER COLUMN "tool" SET DATA TYPE varchar(128);--> statement-breakpoint
ALTER TABLE "approvals" ALTER COLUMN "tool" SET DATA TYPE varchar(128);