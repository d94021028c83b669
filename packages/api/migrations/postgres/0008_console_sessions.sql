CREATE TABLE "console_sessions" (
	"digest" varchar(64) PRIMARY KEY NOT NULL,
	"key_digest" varchar(64) NOT NULL,
	"created_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "console_sessions_key_idx" ON "console_sessions" USING btree ("key_digest","created_at");--> statement-breakpoint
CREATE INDEX "console_sessions_expiry_idx" ON "console_sessions" USING btree ("expires_at");