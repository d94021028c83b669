CREATE TABLE "user_model_daily_usage" (
	"user_id" varchar(255) NOT NULL,
	"day" timestamp (3) with time zone NOT NULL,
	"model" varchar(255) NOT NULL,
	"runs" integer DEFAULT 0 NOT NULL,
	"tokens" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "user_model_daily_usage_user_id_day_model_pk" PRIMARY KEY("user_id","day","model")
);
--> statement-breakpoint
-- What the runs still stored used of each model, as 0009 filled the ledger; the rest of the
-- ledger's counts (runs already deleted, runs from before models were chosen) stays unattributed.
INSERT INTO "user_model_daily_usage" ("user_id", "day", "model", "runs", "tokens")
SELECT "user_id", date_trunc('day', "created_at" AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', "model", count(*), coalesce(sum("input_tokens" + "output_tokens"), 0)
FROM "runs" WHERE "model" IS NOT NULL GROUP BY 1, 2, 3;
