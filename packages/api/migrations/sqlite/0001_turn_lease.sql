ALTER TABLE `conversations` ADD `busy_token` text;--> statement-breakpoint
ALTER TABLE `conversations` ADD `busy_until` integer;