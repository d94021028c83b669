CREATE TABLE `user_daily_usage` (
	`user_id` text(255) NOT NULL,
	`day` integer NOT NULL,
	`runs` integer DEFAULT 0 NOT NULL,
	`tokens` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`user_id`, `day`)
);
--> statement-breakpoint
-- What the runs still stored used, so that an upgrade does not hand anyone a fresh day.
INSERT INTO `user_daily_usage` (`user_id`, `day`, `runs`, `tokens`)
SELECT `user_id`, (`created_at` / 86400000) * 86400000, count(*), coalesce(sum(`input_tokens` + `output_tokens`), 0)
FROM `runs` GROUP BY 1, 2;
