CREATE TABLE `run_event_pages` (
	`run_id` text NOT NULL,
	`first_seq` integer NOT NULL,
	`last_seq` integer NOT NULL,
	`frames` text NOT NULL,
	PRIMARY KEY(`run_id`, `first_seq`),
	FOREIGN KEY (`run_id`) REFERENCES `runs`(`id`) ON UPDATE no action ON DELETE cascade
);
