CREATE TABLE `audit_log` (
	`seq` integer PRIMARY KEY NOT NULL,
	`at` integer NOT NULL,
	`actor` text(64) NOT NULL,
	`action` text(50) NOT NULL,
	`target` text(255),
	`detail` text NOT NULL,
	`hash` text(64) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_log_actor_idx` ON `audit_log` (`actor`,`seq`);--> statement-breakpoint
CREATE INDEX `audit_log_action_idx` ON `audit_log` (`action`,`seq`);