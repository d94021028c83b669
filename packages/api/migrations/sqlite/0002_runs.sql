CREATE TABLE `run_events` (
	`run_id` text NOT NULL,
	`seq` integer NOT NULL,
	`data` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`run_id`, `seq`),
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `runs` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text(255) NOT NULL,
	`agent_type` text(50) NOT NULL,
	`mode` text(20) NOT NULL,
	`status` text(20) NOT NULL,
	`prompt` text NOT NULL,
	`working_dir` text(1024) NOT NULL,
	`conversation_id` text,
	`response` text,
	`error` text,
	`created_at` integer NOT NULL,
	`started_at` integer,
	`ended_at` integer,
	`model_calls` integer DEFAULT 0 NOT NULL,
	`tool_calls` integer DEFAULT 0 NOT NULL,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`last_event_id` integer DEFAULT 0 NOT NULL,
	`idempotency_key` text(255),
	`request_hash` text(128),
	`lease_owner` text(255),
	`lease_until` integer,
	FOREIGN KEY (`conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `runs_user_recent_idx` ON `runs` (`user_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `runs_user_status_idx` ON `runs` (`user_id`,`status`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `runs_user_idempotency_idx` ON `runs` (`user_id`,`idempotency_key`);--> statement-breakpoint
CREATE INDEX `runs_status_lease_idx` ON `runs` (`status`,`lease_until`);--> statement-breakpoint
CREATE INDEX `runs_ended_idx` ON `runs` (`ended_at`);--> statement-breakpoint
CREATE INDEX `runs_conversation_idx` ON `runs` (`conversation_id`);