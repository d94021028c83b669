CREATE TABLE `user_model_daily_usage` (
	`user_id` text(255) NOT NULL,
	`day` integer NOT NULL,
	`model` text(255) NOT NULL,
	`runs` integer DEFAULT 0 NOT NULL,
	`tokens` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`user_id`, `day`, `model`)
);
--> statement-breakpoint
-- What the runs still stored used of each model, as 0009 filled the ledger; the rest of the
-- ledger's counts (runs already deleted, runs from before models were chosen) stays unattributed.
INSERT INTO `user_model_daily_usage` (`user_id`, `day`, `model`, `runs`, `tokens`)
SELECT `user_id`, (`created_at` / 86400000) * 86400000, `model`, count(*), coalesce(sum(`input_tokens` + `output_tokens`), 0)
FROM `runs` WHERE `model` IS NOT NULL GROUP BY 1, 2, 3;
