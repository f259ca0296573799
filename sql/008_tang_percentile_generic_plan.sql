-- pbs-softwalltime schema version 8: tang's percentile through the checkpoints, planned once per connection
-- and without a query over the buckets.
--   * Version 7's function let PostgreSQL plan its statements anew for each of a connection's first five
--     calls (custom plans), about 20 ms each at 10 M rows; a hook's connection is new after every restart of
--     pbs_server's interpreter. It now keeps one generic plan per connection (plan_cache_mode), as
--     tang_refresh does.
--   * The jobs after the newest checkpoint and before the window are added to the checkpoints' counts in
--     place, and the buckets are walked in PL/pgSQL to the one that holds the rank: version 7 joined, sorted
--     and summed the 257 buckets with a query (numeric running sums), the larger part of its time.
-- The answer is the same (tests/test_tang_checkpoints.py).

-- tang's default key (a job without a project: project NULL): how many of the key's jobs ended at or
-- after window_start, and the nearest-rank percentile of their used times (NULL when there is none);
-- the rank is ceil(percentile x eligible / 100), in integers.
CREATE OR REPLACE FUNCTION tang_percentile(key_user text, key_project text, key_walltime integer,
                                           window_start bigint, percentile integer,
                                           OUT eligible bigint, OUT used integer)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan AS $$
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
    -- window (added to the older one's counts); then the bucket holding the rank, and the rank within it
    IF tail_first > newest_end THEN
        FOR bucket IN SELECT j.bucket FROM public.tang_key_jobs(key_user, key_project, key_walltime,
                                                                tail_first, 9223372036854775807) j LOOP
            newest[bucket + 1] := newest[bucket + 1] + 1;
        END LOOP;
    END IF;
    FOR bucket IN SELECT j.bucket FROM public.tang_key_jobs(key_user, key_project, key_walltime,
                                                            gap_first, gap_last) j LOOP
        older[bucket + 1] := older[bucket + 1] + 1;
    END LOOP;
    SELECT sum(n.new - n.old) INTO eligible FROM unnest(newest, older) AS n(new, old);
    rank := (percentile * eligible + 99) / 100;
    bucket := 0;
    LOOP
        bucket := bucket + 1;
        rank := rank - (newest[bucket] - older[bucket]);
        EXIT WHEN rank <= 0 OR bucket = 257;
    END LOOP;
    rank := rank + (newest[bucket] - older[bucket]);
    bucket := bucket - 1;
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
