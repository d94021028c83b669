CREATE TABLE "sandbox_activities" (
	"id" uuid PRIMARY KEY NOT NULL,
	"replica" uuid NOT NULL,
	"kind" varchar(16) NOT NULL,
	"roots" text NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "sandbox_activities_kind_idx" ON "sandbox_activities" USING btree ("kind","expires_at");