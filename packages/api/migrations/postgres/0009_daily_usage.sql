CREATE TABLE "user_daily_usage" (
	"user_id" varchar(255) NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"runs" integer DEFAULT 0 NOT NULL,
	"tokens" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "user_daily_usage_user_id_day_pk" PRIMARY KEY("user_id","day")
);
--> statement-breakpoint
-- What the runs still stored used, so that an upgrade does not hand anyone a fresh day.
INSERT INTO "user_daily_usage" ("user_id", "day", "runs", "tokens")
SELECT "user_id", date_trunc('day', "created_at" AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', count(*), coalesce(sum("input_tokens" + "output_tokens"), 0)
FROM "runs" GROUP BY 1, 2;
