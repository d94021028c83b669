CREATE TABLE `sandbox_activities` (
	`id` text PRIMARY KEY NOT NULL,
	`replica` text NOT NULL,
	`kind` text(16) NOT NULL,
	`roots` text NOT NULL,
	`started_at` integer NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `sandbox_activities_kind_idx` ON `sandbox_activities` (`kind`,`expires_at`);