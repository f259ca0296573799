-- pbs-softwalltime schema version 7: tang's percentile without reading every job of the window.
-- tang's default key (user, project, walltime) takes a percentile of min(runtime, walltime) over
-- every job of the key that ended in the window. Reading them all costs as many index entries as
-- the key has jobs in the window (100,000 for a busy user). Instead:
--   * the jobs' used times fall into 257 buckets, bucket = used x 256 / walltime (integer division;
--     bucket 256 is used = walltime, a job that reached its walltime);
--   * tang_checkpoints holds, every `checkpoint_rows` jobs of a key in end-time order, how many of
--     the key's jobs with end_time <= the checkpoint's end_time are in each bucket;
--   * the jobs of the window per bucket are then the newest checkpoint minus the newest one before
--     the window, plus the jobs after the newest checkpoint, minus the jobs between the older
--     checkpoint and the window's start: two checkpoints and at most about 2 x checkpoint_rows jobs;
--   * the nearest rank is found by walking the buckets, and the value within its bucket by reading
--     that bucket's jobs of the window only (completed_jobs_tang_bucket).
-- The result is exactly that of reading every job (tests/test_tang_checkpoints.py).
-- Triggers on completed_jobs keep the checkpoints right whatever writes it (record_completed_jobs,
-- db prune's DELETE, TRUNCATE, the owner's own statements): a statement that changes jobs of a key
-- ending at time T rebuilds that key's checkpoints from T on, under a lock per key so that two
-- writers of one key take turns.

CREATE TABLE IF NOT EXISTS tang_settings (
    checkpoint_rows integer NOT NULL CHECK (checkpoint_rows > 0)
);
INSERT INTO tang_settings (checkpoint_rows) SELECT 64 WHERE NOT EXISTS (SELECT 1 FROM tang_settings);

-- project_key: '' for jobs without a project, '=' || project otherwise (a key column that is never NULL).
CREATE TABLE IF NOT EXISTS tang_checkpoints (
    user_name   text NOT NULL,
    project_key text NOT NULL,
    walltime_s  integer NOT NULL,
    end_time    bigint NOT NULL,
    counts      integer[] NOT NULL,
    PRIMARY KEY (user_name, project_key, walltime_s, end_time)
);

CREATE INDEX IF NOT EXISTS completed_jobs_tang_bucket
    ON completed_jobs (user_name, project, walltime_s,
                       ((LEAST(runtime_s, walltime_s)::bigint * 256 / walltime_s)::integer), end_time)
    INCLUDE (runtime_s) WHERE walltime_s > 0;

-- The key's jobs (walltime > 0) that ended from first_end to last_end, with their used time and bucket.
-- Two branches because `project = NULL` matches nothing and `IS NOT DISTINCT FROM` reads no index; one
-- SQL statement so that PostgreSQL inlines it into the statement that calls it.
CREATE OR REPLACE FUNCTION tang_key_jobs(key_user text, key_project text, key_walltime integer,
                                         first_end bigint, last_end bigint)
RETURNS TABLE (end_time bigint, used integer, bucket integer)
LANGUAGE sql STABLE AS $$
    SELECT c.end_time, LEAST(c.runtime_s, c.walltime_s),
           (LEAST(c.runtime_s, c.walltime_s)::bigint * 256 / c.walltime_s)::integer
    FROM public.completed_jobs c
    WHERE key_project IS NULL AND c.user_name = key_user AND c.project IS NULL AND c.walltime_s = key_walltime
      AND c.walltime_s > 0 AND c.end_time >= first_end AND c.end_time <= last_end
    UNION ALL
    SELECT c.end_time, LEAST(c.runtime_s, c.walltime_s),
           (LEAST(c.runtime_s, c.walltime_s)::bigint * 256 / c.walltime_s)::integer
    FROM public.completed_jobs c
    WHERE c.user_name = key_user AND c.project = key_project AND c.walltime_s = key_walltime
      AND c.walltime_s > 0 AND c.end_time >= first_end AND c.end_time <= last_end
$$;

-- Rebuild the key's checkpoints from changed_end on (those before it hold no changed job).
CREATE OR REPLACE FUNCTION tang_refresh(key_user text, key_project text, key_walltime integer, changed_end bigint)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan AS $$
DECLARE
    key_code text := coalesce('=' || key_project, '');
    spacing integer;
    counts integer[];
    first_end bigint := -9223372036854775808;
    pending integer := 0;
    previous_end bigint;
    job record;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('pbs-softwalltime tang'),
                                  hashtext(key_user || '/' || key_code || '/' || key_walltime) & 255);
    DELETE FROM public.tang_checkpoints t WHERE t.user_name = key_user AND t.project_key = key_code
        AND t.walltime_s = key_walltime AND t.end_time >= changed_end;
    SELECT t.end_time, t.counts INTO previous_end, counts FROM public.tang_checkpoints t
        WHERE t.user_name = key_user AND t.project_key = key_code AND t.walltime_s = key_walltime
        ORDER BY t.end_time DESC LIMIT 1;
    IF FOUND THEN
        IF previous_end = 9223372036854775807 THEN
            RETURN;
        END IF;
        first_end := previous_end + 1;
    ELSE
        counts := array_fill(0, ARRAY[257]);
    END IF;
    SELECT s.checkpoint_rows INTO spacing FROM public.tang_settings s;
    IF (SELECT count(*) FROM (SELECT 1 FROM public.tang_key_jobs(key_user, key_project, key_walltime, first_end,
                                                                 9223372036854775807) LIMIT spacing) j) < spacing THEN
        RETURN;
    END IF;
    FOR job IN SELECT * FROM public.tang_key_jobs(key_user, key_project, key_walltime, first_end,
                                                  9223372036854775807) j ORDER BY j.end_time LOOP
        IF pending >= spacing AND job.end_time > previous_end THEN
            INSERT INTO public.tang_checkpoints VALUES (key_user, key_code, key_walltime, previous_end, counts);
            pending := 0;
        END IF;
        counts[job.bucket + 1] := counts[job.bucket + 1] + 1;
        pending := pending + 1;
        previous_end := job.end_time;
    END LOOP;
END
$$;

-- The keys a statement changed (an UPDATE that leaves a job's key, end time and runtime as they were
-- changes none), each with the earliest end time changed. Their locks are taken first, in one order, so
-- that two statements never wait on each other; then, with what is committed by then in view, only the
-- keys that have a checkpoint at or after that end time, or at least checkpoint_rows jobs from their
-- newest checkpoint on, are rebuilt (for the others there is nothing to do). Generic plans: planning
-- these statements again for each one-job statement (the jobobit hook's) would cost more than running them.
CREATE OR REPLACE FUNCTION tang_refresh_keys() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    users text[];
    projects text[];
    walltimes integer[];
    ends bigint[];
    spacing integer;
    changed record;
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        TRUNCATE public.tang_checkpoints;
        RETURN NULL;
    ELSIF TG_OP = 'INSERT' THEN
        SELECT array_agg(k.user_name), array_agg(k.project), array_agg(k.walltime_s), array_agg(k.changed_end)
            INTO users, projects, walltimes, ends
            FROM (SELECT user_name, project, walltime_s, min(end_time) AS changed_end FROM new_jobs
                  WHERE walltime_s > 0 GROUP BY user_name, project, walltime_s) k;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(k.user_name), array_agg(k.project), array_agg(k.walltime_s), array_agg(k.changed_end)
            INTO users, projects, walltimes, ends
            FROM (SELECT user_name, project, walltime_s, min(end_time) AS changed_end FROM old_jobs
                  WHERE walltime_s > 0 GROUP BY user_name, project, walltime_s) k;
    ELSE
        SELECT array_agg(k.user_name), array_agg(k.project), array_agg(k.walltime_s), array_agg(k.changed_end)
            INTO users, projects, walltimes, ends
            FROM (WITH
                      before AS (SELECT job_id, user_name, project, walltime_s, end_time, runtime_s FROM old_jobs),
                      after AS (SELECT job_id, user_name, project, walltime_s, end_time, runtime_s FROM new_jobs),
                      changed_jobs AS ((TABLE before EXCEPT TABLE after) UNION ALL (TABLE after EXCEPT TABLE before))
                  SELECT user_name, project, walltime_s, min(end_time) AS changed_end FROM changed_jobs
                  WHERE walltime_s > 0 GROUP BY user_name, project, walltime_s) k;
    END IF;
    IF users IS NULL THEN
        RETURN NULL;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('pbs-softwalltime tang'), l.slot)
        FROM (SELECT DISTINCT hashtext(k.user_name || '/' || coalesce('=' || k.project, '') || '/' || k.walltime_s)
                              & 255 AS slot
              FROM unnest(users, projects, walltimes) AS k(user_name, project, walltime_s)) l
        ORDER BY l.slot;
    SELECT s.checkpoint_rows INTO spacing FROM public.tang_settings s;
    FOR changed IN
        SELECT k.user_name, k.project, k.walltime_s, k.changed_end
        FROM unnest(users, projects, walltimes, ends) AS k(user_name, project, walltime_s, changed_end),
             LATERAL (SELECT coalesce(max(t.end_time), -9223372036854775808) AS end_time
                      FROM public.tang_checkpoints t
                      WHERE t.user_name = k.user_name AND t.project_key = coalesce('=' || k.project, '')
                        AND t.walltime_s = k.walltime_s) AS newest
        WHERE newest.end_time >= k.changed_end
           OR (SELECT count(*) FROM (SELECT 1 FROM public.tang_key_jobs(k.user_name, k.project, k.walltime_s,
                                                                        newest.end_time, 9223372036854775807)
                                     LIMIT spacing) j) >= spacing
        ORDER BY hashtext(k.user_name || '/' || coalesce('=' || k.project, '') || '/' || k.walltime_s) & 255,
                 k.user_name, k.project, k.walltime_s
    LOOP
        PERFORM public.tang_refresh(changed.user_name, changed.project, changed.walltime_s, changed.changed_end);
    END LOOP;
    RETURN NULL;
END
$$;

CREATE TRIGGER tang_checkpoints_insert AFTER INSERT ON completed_jobs
    REFERENCING NEW TABLE AS new_jobs FOR EACH STATEMENT EXECUTE FUNCTION tang_refresh_keys();
CREATE TRIGGER tang_checkpoints_update AFTER UPDATE ON completed_jobs
    REFERENCING OLD TABLE AS old_jobs NEW TABLE AS new_jobs FOR EACH STATEMENT EXECUTE FUNCTION tang_refresh_keys();
CREATE TRIGGER tang_checkpoints_delete AFTER DELETE ON completed_jobs
    REFERENCING OLD TABLE AS old_jobs FOR EACH STATEMENT EXECUTE FUNCTION tang_refresh_keys();
CREATE TRIGGER tang_checkpoints_truncate AFTER TRUNCATE ON completed_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION tang_refresh_keys();

-- tang's default key (a job without a project: project NULL): how many of the key's jobs ended at or
-- after window_start, and the nearest-rank percentile of their used times (NULL when there is none);
-- the rank is ceil(percentile x eligible / 100), in integers.
CREATE OR REPLACE FUNCTION tang_percentile(key_user text, key_project text, key_walltime integer,
                                           window_start bigint, percentile integer,
                                           OUT eligible bigint, OUT used integer)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    key_code text := coalesce('=' || key_project, '');
    newest_end bigint;
    newest integer[];
    older_end bigint;
    older integer[];
    tail_first bigint;
    gap_first bigint := -9223372036854775808;
    gap_last bigint;
    sorted integer[];
    bucket integer;
    rank bigint;
BEGIN
    SELECT t.end_time, t.counts INTO newest_end, newest FROM public.tang_checkpoints t
        WHERE t.user_name = key_user AND t.project_key = key_code AND t.walltime_s = key_walltime
        ORDER BY t.end_time DESC LIMIT 1;
    IF NOT FOUND OR newest_end < window_start THEN
        -- every job of the window came after the newest checkpoint: read them
        SELECT array_agg(j.used ORDER BY j.used) INTO sorted FROM public.tang_key_jobs(
            key_user, key_project, key_walltime, window_start, 9223372036854775807) j;
        eligible := coalesce(cardinality(sorted), 0);
        used := sorted[(percentile * eligible + 99) / 100];
        RETURN;
    END IF;
    SELECT t.end_time, t.counts INTO older_end, older FROM public.tang_checkpoints t
        WHERE t.user_name = key_user AND t.project_key = key_code AND t.walltime_s = key_walltime
          AND t.end_time < window_start
        ORDER BY t.end_time DESC LIMIT 1;
    IF FOUND THEN
        gap_first := older_end + 1;
    ELSE
        older := array_fill(0, ARRAY[257]);
    END IF;
    IF window_start > gap_first THEN
        gap_last := window_start - 1;
    ELSE  -- no job between the older checkpoint and the window (window_start - 1 might not be a bigint)
        gap_first := 0;
        gap_last := -1;
    END IF;
    tail_first := CASE WHEN newest_end < 9223372036854775807 THEN newest_end + 1 ELSE newest_end END;
    -- per bucket: newest checkpoint - older checkpoint + jobs after the newest - jobs from the older to the
    -- window; then the bucket holding the rank, and the rank within it
    WITH jobs AS (
        SELECT n.bucket, n.count - o.count AS count
        FROM unnest(newest) WITH ORDINALITY AS n(count, bucket)
        JOIN unnest(older) WITH ORDINALITY AS o(count, bucket) USING (bucket)
        UNION ALL
        SELECT j.bucket + 1, 1 FROM public.tang_key_jobs(key_user, key_project, key_walltime,
                                                         tail_first, 9223372036854775807) j
        WHERE tail_first > newest_end
        UNION ALL
        SELECT j.bucket + 1, -1 FROM public.tang_key_jobs(key_user, key_project, key_walltime, gap_first, gap_last) j
    ), per_bucket AS (
        SELECT jobs.bucket, sum(jobs.count)::bigint AS count FROM jobs GROUP BY jobs.bucket
    ), running AS (
        SELECT p.bucket, p.count, (sum(p.count) OVER (ORDER BY p.bucket))::bigint AS up_to,
               (sum(p.count) OVER ())::bigint AS total
        FROM per_bucket p
    )
    SELECT r.total, r.bucket - 1, (percentile * r.total + 99) / 100 - (r.up_to - r.count)
        INTO eligible, bucket, rank
        FROM running r WHERE r.total = 0 OR r.up_to >= (percentile * r.total + 99) / 100
        ORDER BY r.bucket LIMIT 1;
    IF eligible = 0 THEN
        RETURN;
    ELSIF bucket = 256 THEN
        used := key_walltime;
    ELSIF key_project IS NULL THEN
        SELECT LEAST(c.runtime_s, c.walltime_s) INTO used FROM public.completed_jobs c
            WHERE c.user_name = key_user AND c.project IS NULL AND c.walltime_s = key_walltime
              AND c.walltime_s > 0
              AND (LEAST(c.runtime_s, c.walltime_s)::bigint * 256 / c.walltime_s)::integer = bucket
              AND c.end_time >= window_start
            ORDER BY 1 OFFSET rank - 1 LIMIT 1;
    ELSE
        SELECT LEAST(c.runtime_s, c.walltime_s) INTO used FROM public.completed_jobs c
            WHERE c.user_name = key_user AND c.project = key_project AND c.walltime_s = key_walltime
              AND c.walltime_s > 0
              AND (LEAST(c.runtime_s, c.walltime_s)::bigint * 256 / c.walltime_s)::integer = bucket
              AND c.end_time >= window_start
            ORDER BY 1 OFFSET rank - 1 LIMIT 1;
    END IF;
END
$$;

REVOKE ALL ON tang_settings, tang_checkpoints FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION tang_key_jobs(text, text, integer, bigint, bigint),
    tang_refresh(text, text, integer, bigint), tang_refresh_keys(),
    tang_percentile(text, text, integer, bigint, integer) FROM PUBLIC;
GRANT SELECT ON tang_checkpoints TO softwalltime_reader;
GRANT EXECUTE ON FUNCTION tang_key_jobs(text, text, integer, bigint, bigint),
    tang_percentile(text, text, integer, bigint, integer) TO softwalltime_reader;

-- The checkpoints of the jobs already recorded.
SELECT tang_refresh(user_name, project, walltime_s, -9223372036854775808)
FROM (SELECT DISTINCT user_name, project, walltime_s FROM completed_jobs WHERE walltime_s > 0) AS keys;
