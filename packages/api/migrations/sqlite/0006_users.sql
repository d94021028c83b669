CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text(64) NOT NULL,
	`name` text(100) NOT NULL,
	`prefix` text(12) NOT NULL,
	`digest` text(64) NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer,
	`last_used_at` integer,
	`revoked_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_digest_idx` ON `api_keys` (`digest`);--> statement-breakpoint
CREATE INDEX `api_keys_user_idx` ON `api_keys` (`user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text(64) PRIMARY KEY NOT NULL,
	`role` text(20) NOT NULL,
	`disabled` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`workspace_paths` text DEFAULT '[]' NOT NULL,
	`max_concurrent_runs` integer DEFAULT 0 NOT NULL,
	`max_runs_per_day` integer DEFAULT 0 NOT NULL,
	`max_tokens_per_day` integer DEFAULT 0 NOT NULL
);
