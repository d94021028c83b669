CREATE TABLE `approval_grants` (
	`user_id` text(255) NOT NULL,
	`working_dir` text(1024) NOT NULL,
	`tool` text(50) NOT NULL,
	`match` text NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `working_dir`, `tool`, `match`)
);
--> statement-breakpoint
CREATE TABLE `approvals` (
	`id` text PRIMARY KEY NOT NULL,
	`run_id` text NOT NULL,
	`user_id` text(255) NOT NULL,
	`tool` text(50) NOT NULL,
	`args` text NOT NULL,
	`reason` text NOT NULL,
	`status` text(20) NOT NULL,
	`working_dir` text(1024) NOT NULL,
	`grant_match` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`decided_at` integer,
	`message` text,
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `approvals_user_status_idx` ON `approvals` (`user_id`,`status`,`created_at`);--> statement-breakpoint
CREATE INDEX `approvals_run_status_idx` ON `approvals` (`run_id`,`status`);