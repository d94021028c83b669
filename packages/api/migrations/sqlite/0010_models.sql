ALTER TABLE `conversations` ADD `model` text(255);--> statement-breakpoint
ALTER TABLE `runs` ADD `model` text(255);