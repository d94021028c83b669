CREATE TABLE "run_events" (
	"run_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"data" text NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	CONSTRAINT "run_events_run_id_seq_pk" PRIMARY KEY("run_id","seq")
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" varchar(255) NOT NULL,
	"agent_type" varchar(50) NOT NULL,
	"mode" varchar(20) NOT NULL,
	"status" varchar(20) NOT NULL,
	"prompt" text NOT NULL,
	"working_dir" varchar(1024) NOT NULL,
	"conversation_id" uuid,
	"response" text,
	"error" text,
	"created_at" timestamp (3) with time zone NOT NULL,
	"started_at" timestamp (3) with time zone,
	"ended_at" timestamp (3) with time zone,
	"model_calls" integer DEFAULT 0 NOT NULL,
	"tool_calls" integer DEFAULT 0 NOT NULL,
	"input_tokens" integer DEFAULT 0 NOT NULL,
	"output_tokens" integer DEFAULT 0 NOT NULL,
	"last_event_id" integer DEFAULT 0 NOT NULL,
	"idempotency_key" varchar(255),
	"request_hash" varchar(128),
	"lease_owner" varchar(255),
	"lease_until" timestamp (3) with time zone
);
--> statement-breakpoint
ALTER TABLE "run_events" ADD CONSTRAINT "run_events_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "runs" ADD CONSTRAINT "runs_conversation_id_conversations_id_fk" FOREIGN KEY ("conversation_id") REFERENCES "public"."conversations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "runs_user_recent_idx" ON "runs" USING btree ("user_id","created_at","id");--> statement-breakpoint
CREATE INDEX "runs_user_status_idx" ON "runs" USING btree ("user_id","status","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "runs_user_idempotency_idx" ON "runs" USING btree ("user_id","idempotency_key");--> statement-breakpoint
CREATE INDEX "runs_status_lease_idx" ON "runs" USING btree ("status","lease_until");--> statement-breakpoint
CREATE INDEX "runs_ended_idx" ON "runs" USING btree ("ended_at");--> statement-breakpoint
CREATE INDEX "runs_conversation_idx" ON "runs" USING btree ("conversation_id");