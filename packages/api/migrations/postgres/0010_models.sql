ALTER TABLE "conversations" ADD COLUMN "model" varchar(255);--> statement-breakpoint
ALTER TABLE "runs" ADD COLUMN "model" varchar(255);