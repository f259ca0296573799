-- pbs-softwalltime schema version 6: tang's percentile computed where the rows are.
-- The hooks ask PostgreSQL for the percentile of runtime/walltime over the jobs of
-- Tang et al.'s key (user, project, walltime) that ended in the time window. This
-- index holds each key's jobs together in end-time order, so the window is one
-- range of it, read index-only; the user and user+project keys read that range of
-- the user's or user's and project's jobs, the user+walltime key the user's
-- window in completed_jobs_user_recent.

CREATE INDEX IF NOT EXISTS completed_jobs_tang
    ON completed_jobs (user_name, project, walltime_s, end_time)
    INCLUDE (runtime_s);
