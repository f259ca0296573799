"""Ingestion killed and logs rotated, truncated or replaced: nothing lost, nothing duplicated.

``python -m predictor ingest`` (as an admin runs it: worker processes, small
chunks so a load is many commits) loads a multi-file log set and is SIGKILLed
at a random instant, then run again to the end; the table and the per-file
progress must then equal a clean single load of the same files. The instant
between writing a chunk's rows and writing its progress is also made
deterministic: another session holds the file's ``ingest_progress`` row, so
the ingester blocks right after its rows are written, and is killed there.
``--follow`` meets a new day's file, a file truncated in place and a file
replaced by an edited copy. Full form (``-m slow``): 100 kills.
"""

import os
import random
import signal
import subprocess
import sys
import time
import uuid

import psycopg2
import psycopg2.extensions
import pytest
from conftest import admin_execute, dsn_for
from pgadmin import run_sql
from reliability import (
    figures,  # noqa: F401 (a fixture)
    predictor_cli,
    rejections,
    sizes,
)

from predictor.db.schema import init_schema

KILLS = sizes((10, 300), (100, 4000))
"""(kills, jobs per daily file)."""
FILES = 3
CHUNK_LINES = 200
SETTLE_S = 30
"""How long --follow may take to catch up before the test fails (a liveness bound, not a speed goal)."""


# --- a log set ----------------------------------------------------------------------------

def hms(seconds):
    return "{:02d}:{:02d}:{:02d}".format(seconds // 3600, seconds // 60 % 60, seconds % 60)


def record(kind, job_id, user, day, submit, start=None, runtime=None, extra=""):
    """A Q, S, R or E line shaped like OpenPBS's."""
    fields = ["user={}".format(user), "group=g{}".format(len(user)), "project=_pbs_project_default",
              "jobname=job{}".format(job_id.split(".")[0]), "queue=workq", "ctime={}".format(submit),
              "qtime={}".format(submit), "etime={}".format(submit)]
    if start is not None:
        fields.append("start={}".format(start))
    fields += ["Resource_List.ncpus=4", "Resource_List.walltime=04:00:00"]
    if kind in "ER" and runtime is not None:
        fields += ["session=77", "end={}".format(start + runtime), "Exit_status=0",
                   "resources_used.walltime={}".format(hms(runtime)), "run_count=1"]
    stamp = "04/{:02d}/2026 12:00:00".format(10 + day)
    return "{};{};{};{}{}\n".format(stamp, kind, job_id, " ".join(fields), extra)


def day_lines(rng, day, jobs):
    """One day's records: Q, S, E per job, with reruns, array parents, a never-started job and bad lines."""
    lines = []
    for n in range(jobs):
        job_id = "{}.pbs".format(day * 100000 + n)
        user = "u{}".format(rng.randrange(40))
        submit = 1775800000 + day * 86400 + n * 7
        start, runtime = submit + rng.randrange(600), rng.randrange(1, 14400)
        lines += [record("Q", job_id, user, day, submit), record("S", job_id, user, day, submit, start)]
        if n % 50 == 7:  # a rerun: the job ends twice, the later of its E lines wins
            lines.append(record("R", job_id, user, day, submit, start, runtime))
            lines.append(record("E", job_id, user, day, submit, start, runtime))
            runtime += 1
        lines.append(record("E", job_id, user, day, submit, start, runtime))
        if n % 97 == 3:
            lines.append("04/{:02d}/2026 12:00:00;E;{}[].pbs;user={} start=1 end=2\n".format(10 + day, n, user))
        if n % 89 == 5:
            lines.append(record("E", "{}.never".format(job_id), user, day, submit))
        if n % 113 == 11:
            lines.append(record("E", "{}.bad".format(job_id), user, day, submit, start, runtime, " end=1"))
    rng.shuffle(lines)  # records of one day in any order: the ingester must not care
    return lines


def write_log_set(directory, jobs_per_file, seed=20261122):
    """Daily files 20260410... in ``directory``; the total number of lines."""
    rng = random.Random(seed)
    total = 0
    for day in range(FILES):
        lines = day_lines(rng, day, jobs_per_file)
        (directory / "202604{:02d}".format(10 + day)).write_text("".join(lines))
        total += len(lines)
    return total


# --- the database -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def own_db(database):
    """A throwaway database on the shared server; the module's kills and follows happen there."""
    name = "swt_rel_ingest_{}_{}".format(os.getpid(), uuid.uuid4().hex[:8])
    admin_execute("CREATE DATABASE " + name)
    try:
        init_schema(dsn_for(name))
        yield name, dsn_for(name), database.writer_dsn.replace(database.name, name)
    finally:
        admin_execute("DROP DATABASE IF EXISTS {} WITH (FORCE)".format(name))


def reset(dsn):
    run_sql(dsn, "TRUNCATE completed_jobs, ingest_progress")


def snapshot(dsn):
    """The whole state a load leaves: every row and every file's progress."""
    return (run_sql(dsn, "SELECT * FROM completed_jobs ORDER BY job_id"),
            run_sql(dsn, "SELECT path, head_sha1, tail_sha1, offset_bytes, line_no FROM ingest_progress ORDER BY path"))


def lines_committed(dsn):
    return run_sql(dsn, "SELECT coalesce(sum(line_no), 0) FROM ingest_progress")[0][0]


def with_name(dsn, name):
    params = psycopg2.extensions.parse_dsn(dsn)
    params["application_name"] = name
    return psycopg2.extensions.make_dsn(**params)


# --- running the ingester -------------------------------------------------------------------

def start_ingest(writer_dsn, paths, *options, log_dir):
    """``python -m predictor ingest`` in a session of its own (so its workers can be found); the Popen."""
    stderr = open(os.path.join(str(log_dir), "stderr-{}".format(uuid.uuid4().hex[:8])), "w+")
    command = [sys.executable, "-m", "predictor", "ingest", "--dsn", writer_dsn, "--max-errors", "1000000000",
               "--chunk-lines", str(CHUNK_LINES)] + list(options) + [str(path) for path in paths]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
    process.stderr_file = stderr
    return process


def stderr_of(process):
    """What the process wrote to stderr, read through a file of our own.

    Seeking the file the child writes through would move the offset it shares
    with the child's descendants, and a late write of theirs would overwrite
    the start.
    """
    with open(process.stderr_file.name, encoding="utf-8") as written:
        text = written.read()
    process.stderr_file.close()
    return text


def leftover_processes(process, wait_s=10.0):
    """PIDs still in the killed ingester's process group after up to ``wait_s`` (its orphaned workers)."""
    deadline = time.monotonic() + wait_s
    while True:
        found = subprocess.run(["pgrep", "-g", str(process.pid)], stdout=subprocess.PIPE, text=True).stdout.split()
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def kill_group(process):
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def clean_load(dsn, writer_dsn, directory, tmp_path):
    """A single uninterrupted load from scratch: (state, reported bad lines, seconds)."""
    reset(dsn)
    started = time.monotonic()
    process = start_ingest(writer_dsn, [directory], log_dir=tmp_path)
    assert process.wait(timeout=600) == 1  # the log set holds bad lines
    elapsed = time.monotonic() - started
    return snapshot(dsn), set(rejections(stderr_of(process))), elapsed


# --- killed at random instants, and at chosen jobs -----------------------------------------------

def pinned_jobs(clean_rows, rng, count):
    """Job ids of the second and later daily files: a kill while one of them is blocked is mid-load for sure."""
    later = sorted(row[0] for row in clean_rows if int(row[0].split(".")[0]) >= 100000)
    return [rng.choice(later) for _ in range(count)]


def kill_at_job(dsn, writer_dsn, logs, tmp_path, job_id):
    """Kill the ingester while its upsert waits on ``job_id``, which another session holds uncommitted."""
    holder, process = psycopg2.connect(dsn), None
    try:
        with holder.cursor() as cursor:
            cursor.execute("INSERT INTO completed_jobs (job_id, user_name, runtime_s, end_time) "
                           "VALUES (%s, 'holder', 0, 0)", (job_id,))
        name = "swt_pin_{}".format(uuid.uuid4().hex[:8])
        process = start_ingest(with_name(writer_dsn, name), [logs], log_dir=tmp_path)
        backend = wait_until_blocked(dsn, name, "SELECT record_completed_jobs%")
    finally:
        if process is not None:
            process.kill()
            process.wait()
        holder.rollback()  # the orphaned backend finishes its statement, then finds its client gone
        holder.close()
    wait_for_backend_gone(dsn, backend)
    return process


def kill_at_random_instant(writer_dsn, logs, tmp_path, delay_s):
    process = start_ingest(writer_dsn, [logs], log_dir=tmp_path)
    time.sleep(delay_s)
    process.kill()
    process.wait()
    return process


@pytest.mark.parametrize("kills, jobs_per_file", KILLS)
def test_killed_then_restarted(own_db, tmp_path, figures, kills, jobs_per_file):
    """After each SIGKILL and a restart: the table and progress equal a clean load; every bad line reported.

    Every other kill lands at a random instant (wherever that is); the others
    while the ingester waits on a job of a later file, so they land mid-load
    whatever the machine's speed.
    """
    _, dsn, writer_dsn = own_db
    logs = tmp_path / "accounting"
    logs.mkdir()
    total_lines = write_log_set(logs, jobs_per_file)
    clean_load(dsn, writer_dsn, logs, tmp_path)  # warm the page cache and the server
    clean, bad_lines, clean_s = clean_load(dsn, writer_dsn, logs, tmp_path)
    assert clean[0] and bad_lines
    rng = random.Random(kills)
    pins = iter(pinned_jobs(clean[0], rng, kills // 2))
    landed, killed = {"random": [], "pinned": []}, []
    for trial in range(kills):
        reset(dsn)
        if trial % 2:
            kind, process = "pinned", kill_at_job(dsn, writer_dsn, logs, tmp_path, next(pins))
        else:
            delay_s = clean_s * (trial + rng.random()) / kills
            kind, process = "random", kill_at_random_instant(writer_dsn, logs, tmp_path, delay_s)
        killed.append(process)
        landed[kind].append(lines_committed(dsn) / total_lines)
        reported = set(rejections(stderr_of(process)))
        restart = start_ingest(writer_dsn, [logs], log_dir=tmp_path)
        assert restart.wait(timeout=600) in (0, 1)
        reported |= set(rejections(stderr_of(restart)))
        assert snapshot(dsn) == clean, "trial {}: the table or the progress differs from a clean load".format(trial)
        assert reported == bad_lines, "trial {}: {} bad lines reported, not {}".format(
            trial, len(reported), len(bad_lines))
    orphans = sum(len(leftover_processes(process)) for process in killed)  # workers exit once their pipe closes
    for process in killed:
        kill_group(process)
    everywhere = landed["random"] + landed["pinned"]
    figures("ingest killed (SIGKILL) at random instants and at chosen jobs, restarted", kills=kills, files=FILES,
            lines=total_lines, jobs=len(clean[0]), chunk_lines=CHUNK_LINES, clean_load_s=round(clean_s, 2),
            kills_before_first_commit=sum(fraction == 0 for fraction in everywhere),
            kills_mid_load=sum(0 < fraction < 1 for fraction in everywhere),
            kills_after_last_commit=sum(fraction == 1 for fraction in everywhere), lost=0, duplicated=0,
            orphaned_workers=orphans)
    assert orphans == 0, "worker processes outlived the killed ingester"
    assert all(0 < fraction < 1 for fraction in landed["pinned"]), landed["pinned"]


# --- killed between a chunk's rows and its progress ---------------------------------------------

@pytest.fixture
def progress_holder(own_db):
    """An owner session that keeps locks until the test ends."""
    conn = psycopg2.connect(own_db[1])
    yield conn
    conn.rollback()
    conn.close()


def wait_until_blocked(dsn, application_name, query_pattern):
    """The backend pid of the session ``application_name`` once its statement like ``query_pattern`` waits on a lock."""
    deadline = time.monotonic() + SETTLE_S
    while time.monotonic() < deadline:
        found = run_sql(dsn, "SELECT pid FROM pg_stat_activity WHERE application_name = %s AND wait_event_type = "
                             "'Lock' AND query LIKE %s", (application_name, query_pattern))
        if found:
            return found[0][0]
        time.sleep(0.02)
    raise AssertionError("the ingester never blocked on a lock")


def wait_until_blocked_on_progress(dsn, application_name):
    """The ingester's backend pid once it waits on the progress row, having written its rows in that transaction."""
    pid = wait_until_blocked(dsn, application_name, "SELECT record_ingest_progress%")
    wrote = run_sql(dsn, "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                         "WHERE l.pid = %s AND c.relname = 'completed_jobs' AND l.mode = 'RowExclusiveLock'",
                    (pid,))[0][0]
    assert wrote == 1, "blocked on the progress before writing its rows"
    return pid


@pytest.mark.parametrize("which", ["first chunk of a file", "a later chunk"])
def test_killed_between_rows_and_progress(own_db, tmp_path, progress_holder, figures, which):
    """Rows written, progress blocked by another session's lock, SIGKILL: nothing of that chunk remains;
    a restart then gives exactly a clean load."""
    _, dsn, writer_dsn = own_db
    logs = tmp_path / "accounting"
    logs.mkdir()
    write_log_set(logs, 300)
    clean, _, _ = clean_load(dsn, writer_dsn, logs, tmp_path)
    reset(dsn)
    first = str(logs / "20260410")
    lines = open(first).read().splitlines(True)
    if which == "a later chunk":  # half of the file loaded, the rest appended later
        with open(first, "w") as half:
            half.write("".join(lines[:len(lines) // 2]))
        assert predictor_cli("ingest", "--dsn", writer_dsn, first).returncode in (0, 1)
        with open(first, "a") as rest:
            rest.write("".join(lines[len(lines) // 2:]))
    before = snapshot(dsn)
    with progress_holder.cursor() as cursor:
        if which == "a later chunk":
            cursor.execute("SELECT 1 FROM ingest_progress WHERE path = %s FOR UPDATE", (first,))
        else:  # an uncommitted insert of the same key blocks the ingester's upsert
            cursor.execute("INSERT INTO ingest_progress (path, head_sha1, tail_sha1, offset_bytes, line_no) "
                           "VALUES (%s, 'held', 'held', 0, 0)", (first,))
    name = "swt_kill_{}".format(uuid.uuid4().hex[:8])
    process = start_ingest(with_name(writer_dsn, name), [first], log_dir=tmp_path)
    backend = wait_until_blocked_on_progress(dsn, name)
    process.kill()
    process.wait()
    kill_group(process)
    progress_holder.rollback()  # the orphaned backend finishes its statement, then finds its client gone
    wait_for_backend_gone(dsn, backend)
    assert snapshot(dsn) == before
    restart = start_ingest(writer_dsn, [logs], log_dir=tmp_path)
    assert restart.wait(timeout=600) in (0, 1)
    stderr_of(restart)
    assert snapshot(dsn) == clean
    figures("ingest killed between a chunk's rows and its progress (" + which + ")", kills=1, lost=0,
            duplicated=0, rows_left_by_killed_chunk=0)


def wait_for_backend_gone(dsn, pid):
    deadline = time.monotonic() + SETTLE_S
    while run_sql(dsn, "SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,))[0][0]:
        assert time.monotonic() < deadline, "the killed ingester's backend lingers"
        time.sleep(0.02)


# --- following: rotation, truncation, replacement -----------------------------------------------

def follow(writer_dsn, directory, tmp_path):
    return start_ingest(writer_dsn, [directory], "--follow", "--interval", "0.1", log_dir=tmp_path)


def wait_for(dsn, condition):
    deadline = time.monotonic() + SETTLE_S
    while not condition(snapshot(dsn)):
        assert time.monotonic() < deadline, "--follow did not catch up within {} s".format(SETTLE_S)
        time.sleep(0.1)


def stop(process):
    process.send_signal(signal.SIGTERM)
    code = process.wait(timeout=60)
    stderr = stderr_of(process)
    assert code in (0, 1) and "Traceback" not in stderr, stderr
    return stderr


def reference(dsn, writer_dsn, tmp_path, *versions):
    """The rows a clean load of each version of one day's file, in turn, leaves: ``versions`` are texts."""
    reset(dsn)
    directory = tmp_path / "reference-{}".format(uuid.uuid4().hex[:8])
    directory.mkdir()
    for text in versions:
        (directory / "20260410").write_text(text)
        assert predictor_cli("ingest", "--dsn", writer_dsn, directory).returncode in (0, 1)
    rows = snapshot(dsn)[0]
    reset(dsn)
    return rows


def two_days(tmp_path, jobs=200):
    """The texts of a two-day log set, and an empty accounting directory to follow."""
    source = tmp_path / "source"
    source.mkdir()
    write_log_set(source, jobs)
    logs = tmp_path / "accounting"
    logs.mkdir()
    return (source / "20260410").read_text(), (source / "20260411").read_text(), logs


def test_follow_across_a_new_days_file(own_db, tmp_path, figures):
    """Lines appended (one in two writes) and the next day's file appearing are all loaded, once."""
    _, dsn, writer_dsn = own_db
    day1, day2, logs = two_days(tmp_path)
    reset(dsn)
    expected = reference(dsn, writer_dsn, tmp_path, day1 + day2)  # same jobs, whatever the file
    (logs / "20260410").write_text(day1[:len(day1) // 3])
    process = follow(writer_dsn, logs, tmp_path)
    with open(str(logs / "20260410"), "a") as log:
        for piece in (day1[len(day1) // 3:len(day1) // 2], day1[len(day1) // 2:]):
            time.sleep(0.3)
            log.write(piece)
            log.flush()
    time.sleep(0.3)
    (logs / "20260411").write_text(day2)
    wait_for(dsn, lambda state: state[0] == expected)
    stop(process)
    figures("ingest --follow: next day's file appears", jobs=len(expected), lost=0, duplicated=0)


def test_follow_a_file_truncated_in_place(own_db, tmp_path, figures):
    """copytruncate: the followed file emptied and written again is read from its start; nothing lost."""
    _, dsn, writer_dsn = own_db
    old, new, logs = two_days(tmp_path)
    expected = reference(dsn, writer_dsn, tmp_path, old, new)
    path = logs / "20260410"
    path.write_text(old)
    process = follow(writer_dsn, logs, tmp_path)
    wait_for(dsn, lambda state: state[1] and state[1][0][3] == len(old.encode()))
    with open(str(path), "r+") as log:  # same inode, emptied, then more than before
        log.truncate(0)
        log.write(new)
    wait_for(dsn, lambda state: state[0] == expected)
    stderr = stop(process)
    assert "replaced or truncated" in stderr
    figures("ingest --follow: file truncated in place and rewritten", jobs=len(expected), lost=0, duplicated=0)


def test_follow_a_file_replaced_by_an_edited_copy(own_db, tmp_path, figures):
    """A file replaced (rename over it) by a copy with the same first line and an edited middle is read again."""
    _, dsn, writer_dsn = own_db
    old, next_day, logs = two_days(tmp_path)
    lines = old.splitlines(True)
    edited_at = next(i for i in range(len(lines) // 2, len(lines)) if ";E;" in lines[i] and "end=" in lines[i])
    lines[edited_at] = lines[edited_at].replace("resources_used.walltime=", "resources_used.walltime=1")
    new = "".join(lines) + next_day
    expected = reference(dsn, writer_dsn, tmp_path, old, new)
    path = logs / "20260410"
    path.write_text(old)
    process = follow(writer_dsn, logs, tmp_path)
    wait_for(dsn, lambda state: state[1] and state[1][0][3] == len(old.encode()))
    (logs / ".edited").write_text(new)
    os.replace(str(logs / ".edited"), str(path))
    wait_for(dsn, lambda state: state[0] == expected)
    stop(process)
    figures("ingest --follow: file replaced by an edited copy", jobs=len(expected), lost=0, duplicated=0)


def test_follow_stopped_as_systemd_stops_a_service(own_db, tmp_path):
    """SIGTERM to every process of the service (systemd's default stop) ends --follow with its workers.

    multiprocessing.Pool hung here for ever: a worker killed while it held the
    task queue's lock left the pool's shutdown waiting on that lock.
    """
    _, dsn, writer_dsn = own_db
    day1, _, logs = two_days(tmp_path)
    reset(dsn)
    (logs / "20260410").write_text(day1)
    process = start_ingest(writer_dsn, [logs], "--follow", "--interval", "0.1", "--workers", "2", log_dir=tmp_path)
    try:
        wait_for(dsn, lambda state: state[1] and state[1][0][4] == day1.count("\n"))
        os.killpg(process.pid, signal.SIGTERM)
        code = process.wait(timeout=60)
    finally:
        kill_group(process)
    stderr = stderr_of(process)
    assert code in (0, 1) and "Traceback" not in stderr, stderr
    assert leftover_processes(process) == []
