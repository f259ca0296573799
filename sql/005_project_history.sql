-- pbs-softwalltime schema version 5: each history row read with its project.
-- Tang et al.'s similarity keys compare projects: the user's index also holds
-- the project, so reading a user's jobs with their projects stays an
-- index-only scan; their project key reads a project's jobs across its users,
-- newest first, from an index of its own.

DROP INDEX IF EXISTS completed_jobs_user_recent;
CREATE INDEX completed_jobs_user_recent
    ON completed_jobs (user_name, end_time DESC, job_id DESC)
    INCLUDE (runtime_s, walltime_s, project);

CREATE INDEX IF NOT EXISTS completed_jobs_project_recent
    ON completed_jobs (project, end_time DESC, job_id DESC)
    INCLUDE (runtime_s, walltime_s);
