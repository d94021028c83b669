CREATE TABLE "audit_log" (
	"seq" integer PRIMARY KEY NOT NULL,
	"at" timestamp (3) with time zone NOT NULL,
	"actor" varchar(64) NOT NULL,
	"action" varchar(50) NOT NULL,
	"target" varchar(255),
	"detail" text NOT NULL,
	"hash" varchar(64) NOT NULL
);
--> statement-breakpoint
CREATE INDEX "audit_log_actor_idx" ON "audit_log" USING btree ("actor","seq");--> statement-breakpoint
CREATE INDEX "audit_log_action_idx" ON "audit_log" USING btree ("action","seq");