CREATE TABLE "approval_grants" (
	"user_id" varchar(255) NOT NULL,
	"working_dir" varchar(1024) NOT NULL,
	"tool" varchar(50) NOT NULL,
	"match" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "approval_grants_user_id_working_dir_tool_match_pk" PRIMARY KEY("user_id","working_dir","tool","match")
);
--> statement-breakpoint
CREATE TABLE "approvals" (
	"id" uuid PRIMARY KEY NOT NULL,
	"run_id" uuid NOT NULL,
	"user_id" varchar(255) NOT NULL,
	"tool" varchar(50) NOT NULL,
	"args" text NOT NULL,
	"reason" text NOT NULL,
	"status" varchar(20) NOT NULL,
	"working_dir" varchar(1024) NOT NULL,
	"grant_match" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"decided_at" timestamp (3) with time zone,
	"message" text
);
--> statement-breakpoint
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "approvals_user_status_idx" ON "approvals" USING btree ("user_id","status","created_at");--> statement-breakpoint
CREATE INDEX "approvals_run_status_idx" ON "approvals" USING btree ("run_id","status");