-- pbs-softwalltime schema version 1: the history of completed jobs.
-- Applied by `python -m predictor db init`; safe to run again.
-- Use a database dedicated to pbs-softwalltime.

CREATE TABLE IF NOT EXISTS schema_version (
    version    integer PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
);

-- One row per job that ran and ended. job_id is the PBS job id verbatim
-- (subjobs as 123[4].server). "C" collation: ties on end_time are broken by
-- job_id in byte order, the same order the in-memory store uses.
-- Times are epoch seconds; *_s columns are durations in seconds.
CREATE TABLE IF NOT EXISTS completed_jobs (
    job_id          text COLLATE "C" PRIMARY KEY,
    user_name       text NOT NULL,
    group_name      text,
    project         text,
    queue           text,
    ncpus           integer CHECK (ncpus >= 0),
    walltime_s      integer CHECK (walltime_s >= 0),
    runtime_s       integer NOT NULL CHECK (runtime_s >= 0),
    soft_walltime_s integer CHECK (soft_walltime_s >= 0),
    submit_time     bigint,
    start_time      bigint,
    end_time        bigint NOT NULL,
    exit_status     integer
);

-- Serves "the last N jobs of user U by end time" as an index-only scan.
CREATE INDEX IF NOT EXISTS completed_jobs_user_recent
    ON completed_jobs (user_name, end_time DESC, job_id DESC)
    INCLUDE (runtime_s, walltime_s);

-- How far the ingester has read each accounting file, written in the same
-- transaction as the rows it covers. A file is known by two checksums: of its
-- first line (is it still the same file?) and of the bytes just before
-- offset_bytes (is what we read still there?). Either differing means the file
-- was replaced or truncated, and it is read again from the start.
CREATE TABLE IF NOT EXISTS ingest_progress (
    path         text PRIMARY KEY,
    head_sha1    text NOT NULL,
    tail_sha1    text NOT NULL,
    offset_bytes bigint NOT NULL CHECK (offset_bytes >= 0),
    line_no      bigint NOT NULL CHECK (line_no >= 0),
    updated_at   timestamptz NOT NULL DEFAULT now()
);
