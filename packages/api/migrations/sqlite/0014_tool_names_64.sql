-- PostgreSQL's approvals.tool and approval_grants.tool widen from varchar(50) to varchar(128) in
-- this migration, for MCP tool names of up to 64 characters. SQLite does not enforce a text
-- column's length, so nothing changes here (rebuilding both tables would gain nothing); the file
-- keeps both dialects' migrations numbered alike, and SQLite refuses a file of comments alone.
UPDATE `approval_grants` SET `tool` = `tool` WHERE 0;
