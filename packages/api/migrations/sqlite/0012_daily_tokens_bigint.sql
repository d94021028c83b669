-- PostgreSQL's user_daily_usage.tokens becomes bigint in this migration. SQLite's INTEGER holds
-- 64 bits already, so nothing changes here; the file keeps both dialects' migrations numbered
-- alike. drizzle runs every file's statements, and SQLite refuses a file of comments alone.
UPDATE `user_daily_usage` SET `tokens` = `tokens` WHERE 0;
