-- pbs-softwalltime schema version 4: the writer records jobs, nothing more.
-- Until version 3 softwalltime_writer could INSERT and UPDATE completed_jobs
-- and ingest_progress directly, which also let it update every row at once,
-- lock either table in ACCESS EXCLUSIVE mode (stalling every prediction) or
-- take row locks with SELECT ... FOR UPDATE. Now it writes only through two
-- functions that run as the owner (SECURITY DEFINER) and do one thing each:
--   record_completed_jobs(jobs): upsert whole jobs by job_id (a job seen again
--       is updated in place, as its E record says), returns the rows written;
--   record_ingest_progress(...): how far the ingester has read one file.
-- The writer keeps SELECT (the ingester reads its progress) and its temporary
-- staging table.

REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON completed_jobs, ingest_progress FROM softwalltime_writer;

CREATE OR REPLACE FUNCTION record_completed_jobs(jobs public.completed_jobs[]) RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    WITH written AS (
        INSERT INTO public.completed_jobs AS c
        SELECT * FROM unnest(jobs)
        ON CONFLICT (job_id) DO UPDATE SET
            user_name = EXCLUDED.user_name, group_name = EXCLUDED.group_name, project = EXCLUDED.project,
            queue = EXCLUDED.queue, ncpus = EXCLUDED.ncpus, walltime_s = EXCLUDED.walltime_s,
            runtime_s = EXCLUDED.runtime_s, soft_walltime_s = EXCLUDED.soft_walltime_s,
            submit_time = EXCLUDED.submit_time, start_time = EXCLUDED.start_time,
            end_time = EXCLUDED.end_time, exit_status = EXCLUDED.exit_status
        WHERE (c.user_name, c.group_name, c.project, c.queue, c.ncpus, c.walltime_s, c.runtime_s,
               c.soft_walltime_s, c.submit_time, c.start_time, c.end_time, c.exit_status)
              IS DISTINCT FROM
              (EXCLUDED.user_name, EXCLUDED.group_name, EXCLUDED.project, EXCLUDED.queue, EXCLUDED.ncpus,
               EXCLUDED.walltime_s, EXCLUDED.runtime_s, EXCLUDED.soft_walltime_s, EXCLUDED.submit_time,
               EXCLUDED.start_time, EXCLUDED.end_time, EXCLUDED.exit_status)
        RETURNING 1
    )
    SELECT count(*) FROM written
$$;

CREATE OR REPLACE FUNCTION record_ingest_progress(
    path text, head_sha1 text, tail_sha1 text, offset_bytes bigint, line_no bigint) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    INSERT INTO public.ingest_progress AS p (path, head_sha1, tail_sha1, offset_bytes, line_no, updated_at)
    VALUES (path, head_sha1, tail_sha1, offset_bytes, line_no, now())
    ON CONFLICT (path) DO UPDATE SET head_sha1 = EXCLUDED.head_sha1, tail_sha1 = EXCLUDED.tail_sha1,
        offset_bytes = EXCLUDED.offset_bytes, line_no = EXCLUDED.line_no, updated_at = EXCLUDED.updated_at
$$;

REVOKE EXECUTE ON FUNCTION record_completed_jobs(public.completed_jobs[]) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION record_ingest_progress(text, text, text, bigint, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION record_completed_jobs(public.completed_jobs[]) TO softwalltime_writer;
GRANT EXECUTE ON FUNCTION record_ingest_progress(text, text, text, bigint, bigint) TO softwalltime_writer;
GRANT SELECT ON ingest_progress TO softwalltime_writer;
