CREATE TABLE `console_sessions` (
	`digest` text(64) PRIMARY KEY NOT NULL,
	`key_digest` text(64) NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `console_sessions_key_idx` ON `console_sessions` (`key_digest`,`created_at`);--> statement-breakpoint
CREATE INDEX `console_sessions_expiry_idx` ON `console_sessions` (`expires_at`);