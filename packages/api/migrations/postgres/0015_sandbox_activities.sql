CREATE TABLE "sandbox_activities" (
	"id" uuid PRIMARY KEY NOT NULL,
	"replica" uuid NOT NULL,
	"kind" varchar(16) NOT NULL,
	"roots" text NOT NULL,
	"started_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "sandbox_activities_kind_idx" ON "sandbox_activities" USING btree ("kind","expires_at");--> statement-breakpoint
-- Registers a bash command or a first repository census (db/sandbox-activity.ts) and returns the
-- other replicas' live records, each with its age in milliseconds, in one round trip. The advisory
-- lock ("mada", "cnss") makes registrations take turns until each one's commit; the read after it
-- is a statement of its own, and a VOLATILE function takes a fresh snapshot for each, so of two at
-- once the second sees the first. A census's registration also clears rows lapsed a minute ago.
CREATE FUNCTION "sandbox_activity_register"(p_id uuid, p_replica uuid, p_kind varchar, p_roots text, p_ttl_ms integer)
RETURNS TABLE ("o_kind" varchar, "o_roots" text, "o_age_ms" double precision) LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(1835099233, 1668182899);
  IF p_kind = 'census' THEN
    DELETE FROM "sandbox_activities" AS a WHERE a."expires_at" < now() - interval '1 minute';
  END IF;
  INSERT INTO "sandbox_activities" ("id", "replica", "kind", "roots", "started_at", "expires_at")
    VALUES (p_id, p_replica, p_kind, p_roots, now(), now() + p_ttl_ms * interval '1 millisecond');
  RETURN QUERY SELECT a."kind", a."roots", extract(epoch FROM clock_timestamp() - a."started_at")::double precision * 1000
    FROM "sandbox_activities" AS a WHERE a."replica" <> p_replica AND a."expires_at" > now();
END
$$;
