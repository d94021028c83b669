CREATE TABLE `conversations` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text(255) NOT NULL,
	`agent_type` text(50) DEFAULT 'explore' NOT NULL,
	`title` text(255),
	`working_dir` text(1024) DEFAULT '.' NOT NULL,
	`total_tokens` integer DEFAULT 0 NOT NULL,
	`last_seq` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer,
	`last_activity_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `conversations_user_recent_idx` ON `conversations` (`user_id`,`last_activity_at`,`id`);--> statement-breakpoint
CREATE INDEX `conversations_activity_idx` ON `conversations` (`last_activity_at`);--> statement-breakpoint
CREATE TABLE `messages` (
	`id` text PRIMARY KEY NOT NULL,
	`conversation_id` text NOT NULL,
	`seq` integer NOT NULL,
	`role` text(20) NOT NULL,
	`content` text NOT NULL,
	`token_count` integer DEFAULT 0 NOT NULL,
	`is_summary` integer DEFAULT false NOT NULL,
	`summarizes_up_to` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `messages_conversation_seq_idx` ON `messages` (`conversation_id`,`seq`);--> statement-breakpoint
CREATE INDEX `messages_conversation_active_idx` ON `messages` (`conversation_id`,`is_summary`,`seq`);--> statement-breakpoint
CREATE INDEX `messages_conversation_role_idx` ON `messages` (`conversation_id`,`role`,`seq`);--> statement-breakpoint
CREATE TABLE `user_conversation_counts` (
	`user_id` text(255) PRIMARY KEY NOT NULL,
	`count` integer DEFAULT 0 NOT NULL
);
