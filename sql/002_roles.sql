-- pbs-softwalltime schema version 2: the two roles.
--   softwalltime_reader: predictions (queuejob/runjob/modifyjob hooks, CLI predict).
--   softwalltime_writer: the ingester and the jobobit hook; records jobs, never
--                        deletes, drops or alters (version 4 narrows it further).
-- Both are NOLOGIN groups: grant them to login roles, e.g.
--   CREATE ROLE pbs_hook LOGIN PASSWORD '...' IN ROLE softwalltime_reader;
-- Roles are cluster-wide; creating them again is harmless.

DO $$
BEGIN
    CREATE ROLE softwalltime_reader NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END
$$;

DO $$
BEGIN
    CREATE ROLE softwalltime_writer NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END
$$;

-- Nobody but the owner creates objects here (already the default from PostgreSQL 15).
REVOKE CREATE ON SCHEMA public FROM PUBLIC;

GRANT SELECT ON completed_jobs, schema_version TO softwalltime_reader;
GRANT SELECT, INSERT, UPDATE ON completed_jobs, ingest_progress TO softwalltime_writer;
GRANT SELECT ON schema_version TO softwalltime_writer;

-- The ingester stages each batch in a temporary table (then one upsert).
DO $$
BEGIN
    EXECUTE format('GRANT TEMPORARY ON DATABASE %I TO softwalltime_writer', current_database());
END
$$;
