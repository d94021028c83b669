ALTER TABLE "conversations" ADD COLUMN "busy_token" uuid;--> statement-breakpoint
ALTER TABLE "conversations" ADD COLUMN "busy_until" timestamp (3) with time zone;