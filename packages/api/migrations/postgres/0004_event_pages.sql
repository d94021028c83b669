CREATE TABLE "run_event_pages" (
	"run_id" uuid NOT NULL,
	"first_seq" integer NOT NULL,
	"last_seq" integer NOT NULL,
	"frames" text NOT NULL,
	CONSTRAINT "run_event_pages_run_id_first_seq_pk" PRIMARY KEY("run_id","first_seq")
);
--> statement-breakpoint
ALTER TABLE "run_event_pages" ADD CONSTRAINT "run_event_pages_run_id_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."runs"("id") ON DELETE cascade ON UPDATE no action;