-- pbs-softwalltime schema version 9: tang's percentile finds the bucket holding the rank from the nearer end.
--   * Version 8 walked the 257 buckets from the lowest; tang's default percentile, the 85th, lies near the
--     top, so it walked about 220 of them. The walk now starts from the top when the rank is in the upper
--     half, and counts the rank down from the largest used time.
--   * The jobs of the window are counted in the same PL/pgSQL loop, not by a query over the two arrays.
-- The answer is the same (tests/test_tang_checkpoints.py); benchmarks/tang_percentile_versions.py times the two.

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
    in_bucket bigint;
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
    -- the jobs after the newest checkpoint added to its counts, the jobs from the older one to the window to
    -- the older one's
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
    -- per bucket, newest - older: the window's jobs; then the bucket holding the rank, walked from the nearer
    -- end, and the rank within it
    eligible := 0;
    FOR bucket IN 1..257 LOOP
        eligible := eligible + (newest[bucket] - older[bucket]);
    END LOOP;
    IF eligible = 0 THEN
        RETURN;
    END IF;
    rank := (percentile * eligible + 99) / 100;
    IF 2 * rank > eligible THEN  -- the (eligible - rank + 1)-th from the largest
        rank := eligible - rank + 1;
        bucket := 258;
        LOOP
            bucket := bucket - 1;
            in_bucket := newest[bucket] - older[bucket];
            EXIT WHEN rank <= in_bucket OR bucket = 1;
            rank := rank - in_bucket;
        END LOOP;
        rank := in_bucket - rank + 1;
    ELSE
        bucket := 0;
        LOOP
            bucket := bucket + 1;
            in_bucket := newest[bucket] - older[bucket];
            EXIT WHEN rank <= in_bucket OR bucket = 257;
            rank := rank - in_bucket;
        END LOOP;
    END IF;
    bucket := bucket - 1;
    IF bucket = 256 THEN
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
