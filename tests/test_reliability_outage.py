"""The ingester through database outages and beside a second copy of itself, on a private cluster.

``ingest --follow`` runs exactly as the systemd unit of docs/install.md runs
it (``$PBS_SOFTWALLTIME_DSN``, no other option): the cluster is stopped for
60 s while the follower is in the middle of a chunk (another session holds a
row it must write, so the stop lands mid-transaction for sure), files grow
and appear meanwhile, then the cluster is restarted once more while the
follower idles. The follower must not exit, must say one line when the
database is lost and one when it is back, and must leave the table equal to
a clean load. A plain ``ingest`` may stop, but with the cause in its one
line, and a rerun then completes the load. Two ingesters on one directory
never both load: the second refuses (plain) or waits (``--follow``).
"""

import os
import pathlib
import random
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import uuid

import psycopg2
import pytest
from pgcluster import PrivateCluster
from reliability import figures  # noqa: F401 (a fixture)
from test_reliability_ingest import write_log_set

from predictor.db.schema import init_schema
from predictor.ingest.outage import MAX_PAUSE_S

OUTAGE_S = 60
SETTLE_S = 60
"""How long catching up may take before the test fails (a liveness bound: the retry pause is at most 10 s and the
documented follower's interval 5 s)."""
JOBS_PER_FILE = 300


# --- the cluster, its databases and the log set ----------------------------------------------------------

@pytest.fixture(scope="module")
def cluster():
    private = PrivateCluster()
    try:
        private.start()
        yield private
    finally:
        private.destroy()


@pytest.fixture(autouse=True)
def running(cluster):
    """Each test starts with the cluster up, whatever the previous one left."""
    cluster.ensure_running()


def execute(dsn, sql, params=None):
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    try:
        with conn.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall() if cursor.description else None
    finally:
        conn.close()


def fresh_database(cluster):
    """A new database with the schema; ``(owner DSN, writer DSN)``, the writer a login in softwalltime_writer."""
    name = "swt_{}".format(uuid.uuid4().hex[:8])
    execute(cluster.dsn(), "CREATE DATABASE " + name)
    owner = cluster.dsn(dbname=name)
    init_schema(owner)
    execute(owner, "DO $$ BEGIN CREATE ROLE swt_writer LOGIN IN ROLE softwalltime_writer; "
                   "EXCEPTION WHEN duplicate_object THEN NULL; END $$")
    return owner, cluster.dsn(user="swt_writer", dbname=name)


def state(owner):
    """Every row, and each file's progress by file name (the clean load read the same files elsewhere)."""
    rows = execute(owner, "SELECT * FROM completed_jobs ORDER BY job_id")
    progress = execute(owner, "SELECT path, head_sha1, tail_sha1, offset_bytes, line_no FROM ingest_progress")
    return rows, sorted((os.path.basename(path),) + tuple(rest) for path, *rest in progress)


def lines_committed(owner):
    return int(execute(owner, "SELECT coalesce(sum(line_no), 0) FROM ingest_progress")[0][0])


@pytest.fixture(scope="module")
def log_set(tmp_path_factory):
    """The daily files of the scenario (with bad lines), in a directory of their own."""
    source = tmp_path_factory.mktemp("source")
    write_log_set(source, JOBS_PER_FILE)
    return source


@pytest.fixture(scope="module")
def clean(cluster, log_set, tmp_path_factory):
    """The state one uninterrupted load of the whole log set leaves."""
    owner, writer = fresh_database(cluster)
    process = start_ingest(writer, log_set, log_dir=tmp_path_factory.mktemp("clean"))
    assert process.wait(timeout=600) == 1, stderr_of(process)  # the set holds bad lines
    return state(owner)


# --- running the ingester ----------------------------------------------------------------------------------

def documented_unit():
    """``{key: value}`` of the systemd unit in docs/install.md (the last value of a key given twice)."""
    with open(os.path.join(REPO, "docs", "install.md"), encoding="utf-8") as doc:
        text = doc.read()
    unit = text[text.index("[Unit]"):text.index("WantedBy=")]
    return dict(line.strip().split("=", 1) for line in unit.splitlines() if "=" in line)


def follower_arguments():
    """The documented ExecStart, after the interpreter and before the accounting directory."""
    words = shlex.split(documented_unit()["ExecStart"])
    assert words[:4] == ["/usr/bin/python3", "-m", "predictor", "ingest"], words
    return words[4:-1]


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def start_ingest(writer, *paths, follow=False, log_dir, application="swt_outage"):
    """``python -m predictor ingest`` with the DSN in the environment, as the unit gives it; with ``follow``,
    the options of the documented unit's ExecStart. The Popen."""
    params = psycopg2.extensions.parse_dsn(writer)
    params["application_name"] = application
    env = dict(os.environ, PBS_SOFTWALLTIME_DSN=psycopg2.extensions.make_dsn(**params))
    stderr = open(os.path.join(str(log_dir), "stderr-{}".format(uuid.uuid4().hex[:8])), "w+")
    command = [sys.executable, "-m", "predictor", "ingest"] + (follower_arguments() if follow else []) + [
        str(path) for path in paths]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, env=env, start_new_session=True)
    process.stderr_file = stderr
    return process


def stderr_of(process):
    with open(process.stderr_file.name, encoding="utf-8") as written:
        return written.read()


def stop(process):
    """SIGTERM, as systemd stops the unit; the stderr."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    code = process.wait(timeout=60)
    text = stderr_of(process)
    assert code in (0, 1) and "Traceback" not in text, text
    return text


def wait_for(condition, what, timeout_s=SETTLE_S):
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "{} did not happen within {} s".format(what, timeout_s)
        time.sleep(0.1)
    return time.monotonic()


def hold_job(owner, job_id):
    """Another session's uncommitted row of ``job_id``: whoever writes that job waits, mid-transaction."""
    holder = psycopg2.connect(owner)
    with holder.cursor() as cursor:
        cursor.execute("INSERT INTO completed_jobs (job_id, user_name, runtime_s, end_time) VALUES (%s, 'h', 0, 0)",
                       (job_id,))
    return holder


def blocked(owner, application):
    """Does the ingester's session wait on a lock while recording jobs?"""
    return bool(execute(owner, "SELECT 1 FROM pg_stat_activity WHERE application_name = %s AND wait_event_type = "
                               "'Lock' AND query LIKE 'SELECT record_completed_jobs%%'", (application,)))


def copy_day(log_set, logs, day, part=slice(None)):
    """Append part of a day's lines to the followed directory's copy of that file."""
    name = "202604{:02d}".format(10 + day)
    lines = (log_set / name).read_text().splitlines(True)[part]
    with open(str(logs / name), "a") as log:
        log.write("".join(lines))


def lines_in(directory):
    return sum(len(path.read_text().splitlines()) for path in directory.iterdir())


SECOND_DAY_JOB = "100007.pbs"
"""A job of the second daily file (ids of day d are d * 100000 + n)."""


# --- --follow through a long stop and a restart ------------------------------------------------------------

def test_follow_rides_out_a_long_stop_and_a_restart(cluster, log_set, clean, tmp_path, figures):
    """The documented unit's follower: stopped mid-chunk for 60 s while files grow, then restarted while idle;
    it never exits, says one line when lost and one when back, and the table equals a clean load."""
    owner, writer = fresh_database(cluster)
    logs = tmp_path / "accounting"
    logs.mkdir()
    copy_day(log_set, logs, 0)
    holder = hold_job(owner, SECOND_DAY_JOB)
    follower = start_ingest(writer, logs, follow=True, log_dir=tmp_path)
    try:
        wait_for(lambda: lines_committed(owner) > 0, "the first file's load")
        copy_day(log_set, logs, 1)
        wait_for(lambda: blocked(owner, "swt_outage"), "the follower waiting mid-chunk")
        lines_before = lines_committed(owner)
        cluster.stop()
        stopped = time.monotonic()
        holder.close()
        copy_day(log_set, logs, 2, slice(0, 400))  # files grow while the database is away
        time.sleep(OUTAGE_S - (time.monotonic() - stopped))
        assert follower.poll() is None, stderr_of(follower)
        during = stderr_of(follower)
        cluster.start()
        outage_s = time.monotonic() - stopped
        caught_up = wait_for(lambda: lines_committed(owner) == lines_in(logs),
                             "catching up after the outage") - stopped - outage_s
        cluster.restart()  # while the follower idles between passes
        copy_day(log_set, logs, 2, slice(400, None))
        wait_for(lambda: state(owner) == clean, "the load equal to a clean one after the restart")
    finally:
        text = stop(follower)
    assert during.count("retrying") == 1 and "database back" not in during, during
    assert "already closed" not in text and text.count("retrying") == text.count("database back after"), text
    away_s = [int(seconds) for seconds in re.findall(r"database back after ([0-9]+) s", text)]
    assert text.count("retrying") <= 2 and OUTAGE_S <= max(away_s) <= OUTAGE_S + MAX_PAUSE_S + 10, text
    figures("ingest --follow: database stopped 60 s mid-chunk, then restarted", outage_s=round(outage_s, 1),
            catch_up_s=round(caught_up, 1), reported_away_s=max(away_s), lines_committed_before=lines_before,
            lines_committed_after=lines_committed(owner), jobs=len(clean[0]), lost=0, duplicated=0)


# --- a plain ingest: stops with the cause; a rerun completes ----------------------------------------------

def test_ingest_with_the_database_down_names_the_cause(cluster, log_set, tmp_path):
    """A plain ingest while the database is stopped: exit 2 at once, its one line says the connection was refused."""
    _, writer = fresh_database(cluster)
    cluster.stop()
    try:
        started = time.monotonic()
        process = start_ingest(writer, log_set, log_dir=tmp_path)
        assert process.wait(timeout=60) == 2
    finally:
        cluster.start()
    text = stderr_of(process)
    errors = [line for line in text.splitlines() if "error:" in line]
    assert len(errors) == 1 and "Connection refused" in errors[0] and "already closed" not in text, text
    assert time.monotonic() - started < 30


def test_ingest_stopped_mid_chunk_then_rerun(cluster, log_set, clean, tmp_path, figures):
    """The database stops while a plain ingest is mid-chunk: exit 2 with the server's words and the failed
    reconnect; a rerun once it is back leaves the table equal to a clean load."""
    owner, writer = fresh_database(cluster)
    holder = hold_job(owner, SECOND_DAY_JOB)
    process = start_ingest(writer, log_set, log_dir=tmp_path)
    wait_for(lambda: blocked(owner, "swt_outage"), "the ingester waiting mid-chunk")
    cluster.stop()
    holder.close()
    assert process.wait(timeout=60) == 2
    text = stderr_of(process)
    errors = [line for line in text.splitlines() if "error:" in line]
    assert len(errors) == 1 and "reconnecting" in errors[0] and "already closed" not in text, text
    assert "terminating connection" in errors[0] or "server closed the connection" in errors[0], text
    cluster.start()
    rerun = start_ingest(writer, log_set, log_dir=tmp_path)
    assert rerun.wait(timeout=600) == 1
    assert state(owner) == clean
    figures("ingest: database stopped mid-chunk, then a rerun", exit_status=2, lost=0, duplicated=0)


def test_ingest_reconnects_once_after_a_restart(cluster, log_set, clean, tmp_path):
    """A restart finished before the ingester notices: it reconnects and completes the load in the same run."""
    owner, writer = fresh_database(cluster)
    holder = hold_job(owner, SECOND_DAY_JOB)
    process = start_ingest(writer, log_set, log_dir=tmp_path)
    wait_for(lambda: blocked(owner, "swt_outage"), "the ingester waiting mid-chunk")
    os.kill(process.pid, signal.SIGSTOP)  # it notices the restart only once the server is back
    try:
        cluster.restart()
        holder.close()
    finally:
        os.kill(process.pid, signal.SIGCONT)
    assert process.wait(timeout=600) == 1, stderr_of(process)
    assert state(owner) == clean


# --- two ingesters on one directory and database ----------------------------------------------------------

def test_second_ingester_refuses_with_one_line(cluster, log_set, clean, tmp_path):
    """While one ingester loads a directory, a second one on it exits 2 at once, naming the first; the first's
    load is complete."""
    owner, writer = fresh_database(cluster)
    holder = hold_job(owner, SECOND_DAY_JOB)
    first = start_ingest(writer, log_set, log_dir=tmp_path)
    wait_for(lambda: blocked(owner, "swt_outage"), "the first ingester loading")
    second = start_ingest(writer, str(log_set / "20260412"), log_dir=tmp_path, application="swt_second")
    assert second.wait(timeout=60) == 2
    text = stderr_of(second)
    errors = [line for line in text.splitlines() if "error:" in line]
    assert len(errors) == 1 and "another ingester is loading {}".format(log_set) in errors[0], text
    assert "swt_outage" in errors[0], text
    holder.rollback()
    holder.close()
    assert first.wait(timeout=600) == 1
    assert state(owner) == clean


def test_second_follower_waits_then_takes_over(cluster, log_set, tmp_path):
    """A follower started while another ingester loads the directory waits (one line), then follows it."""
    owner, writer = fresh_database(cluster)
    logs = tmp_path / "accounting"
    logs.mkdir()
    copy_day(log_set, logs, 0)
    copy_day(log_set, logs, 1)
    holder = hold_job(owner, SECOND_DAY_JOB)
    first = start_ingest(writer, logs, log_dir=tmp_path)
    wait_for(lambda: blocked(owner, "swt_outage"), "the first ingester loading")
    follower = start_ingest(writer, logs, follow=True, log_dir=tmp_path, application="swt_second")
    try:
        wait_for(lambda: "waiting until it stops" in stderr_of(follower), "the follower's waiting line")
        holder.rollback()
        holder.close()
        assert first.wait(timeout=600) == 1
        loaded = lines_committed(owner)
        copy_day(log_set, logs, 2)
        wait_for(lambda: len(state(owner)[1]) == 3, "the follower loading the new file")
    finally:
        text = stop(follower)
    assert text.count("waiting until it stops") == 1 and text.count("stopped: loading") == 1, text
    assert lines_committed(owner) > loaded


def test_ingesters_started_together_never_deadlock(cluster, log_set, clean, tmp_path):
    """Four ingesters of one directory at once: one loads, the three others refuse with one line each;
    no deadlock, and the load equals a clean one."""
    owner, writer = fresh_database(cluster)
    holder = hold_job(owner, SECOND_DAY_JOB)  # whoever gets the directory stays busy until all have tried
    processes = [start_ingest(writer, log_set, log_dir=tmp_path) for _ in range(4)]
    wait_for(lambda: sum(process.poll() is not None for process in processes) == 3, "three refusals")
    holder.rollback()
    holder.close()
    codes = [process.wait(timeout=600) for process in processes]
    texts = [stderr_of(process) for process in processes]
    assert sorted(codes) == [1, 2, 2, 2] and "deadlock" not in "".join(texts), texts
    assert all("another ingester" in text for code, text in zip(codes, texts) if code == 2), texts
    assert state(owner) == clean


def test_documented_unit_restarts_for_ever():
    """The unit restarts the follower after a pause, with no start limit that would leave it failed."""
    unit = documented_unit()
    assert unit["Restart"] == "always" and int(unit["RestartSec"]) >= 5 and unit["StartLimitIntervalSec"] == "0"
    assert "--follow" in follower_arguments() and "PBS_SOFTWALLTIME_DSN" in unit["Environment"]


def test_follower_started_while_the_database_is_down_waits_for_it(cluster, log_set, clean, tmp_path):
    """Started with the database stopped, the follower stays up (one line) and loads everything once it is back."""
    owner, writer = fresh_database(cluster)
    cluster.stop()
    try:
        follower = start_ingest(writer, log_set, follow=True, log_dir=tmp_path)
        wait_for(lambda: "retrying" in stderr_of(follower), "the follower's line about the database")
        time.sleep(3)
        assert follower.poll() is None, stderr_of(follower)
    finally:
        cluster.start()
    try:
        wait_for(lambda: state(owner) == clean, "the load once the database is up")
    finally:
        text = stop(follower)
    assert text.count("retrying") == 1 and text.count("database back after") == 1, text


def test_follow_a_file_rotated_by_rename(cluster, log_set, tmp_path):
    """The followed file renamed away (to a name the directory still lists) and written on under its new name:
    every job is loaded once, as a clean load of the final files gives."""
    owner, writer = fresh_database(cluster)
    reference_owner, reference_writer = fresh_database(cluster)
    logs = tmp_path / "accounting"
    logs.mkdir()
    copy_day(log_set, logs, 0, slice(0, 300))
    follower = start_ingest(writer, logs, follow=True, log_dir=tmp_path)
    try:
        wait_for(lambda: lines_committed(owner) == 300, "the first lines")
        os.rename(str(logs / "20260410"), str(logs / "20260410.gz"))  # a plain file named .gz is read as text
        with open(str(logs / "20260410.gz"), "a") as rotated:  # pbs_server still holds it open
            rotated.write("".join((log_set / "20260410").read_text().splitlines(True)[300:]))
        copy_day(log_set, logs, 1)
        wait_for(lambda: lines_committed(owner) == 300 + lines_in(logs), "the rotated file and the new one")
    finally:
        stop(follower)
    assert start_ingest(reference_writer, logs, log_dir=tmp_path).wait(timeout=600) == 1
    assert state(owner)[0] == state(reference_owner)[0]


def test_killed_again_and_again_while_files_grow(cluster, log_set, clean, tmp_path, figures):
    """The follower SIGKILLed at random instants, six times, while the files grow between kills; restarted each
    time: the table ends equal to a clean load."""
    owner, writer = fresh_database(cluster)
    logs = tmp_path / "accounting"
    logs.mkdir()
    rng = random.Random(20261126)
    pieces = [(day, slice(start, start + 400)) for day in range(3) for start in range(0, 1300, 400)]
    for kill in range(6):  # the last pieces are left for the follower that is not killed
        for day, part in pieces[kill * (len(pieces) - 3) // 6:(kill + 1) * (len(pieces) - 3) // 6]:
            copy_day(log_set, logs, day, part)
        follower = start_ingest(writer, logs, follow=True, log_dir=tmp_path)
        time.sleep(rng.uniform(0.4, 1.5))
        os.killpg(follower.pid, signal.SIGKILL)
        follower.wait()
    follower = start_ingest(writer, logs, follow=True, log_dir=tmp_path)
    for day, part in pieces[-3:]:
        copy_day(log_set, logs, day, part)
    try:
        wait_for(lambda: state(owner) == clean, "the load after the kills")
    finally:
        stop(follower)
    figures("ingest --follow: SIGKILLed 6 times while files grow", kills=6, jobs=len(clean[0]), lost=0,
            duplicated=0)


# --- a full disk ----------------------------------------------------------------------------------------

@pytest.fixture
def small_disk():
    """A private cluster on a 160 MB tmpfs of its own; ``(cluster, mount point)``. The mount point is outside
    pytest's private directories: the cluster runs as the postgres user."""
    mount = pathlib.Path(tempfile.mkdtemp(prefix="swt_disk_"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=160m,mode=1777", "tmpfs", str(mount)], check=True)
    private = None
    try:
        private = PrivateCluster(parent=str(mount))
        private.start()
        yield private, mount
    finally:
        if private is not None:
            private.destroy()
        subprocess.run(["umount", "-l", str(mount)], check=False)
        os.rmdir(str(mount))


def fill(mount, owner, leave_bytes):
    """Fill the disk but ``leave_bytes``, after starting a fresh WAL segment (a full WAL would crash the server;
    a full disk must only refuse the rows); the filler's path."""
    execute(owner, "SELECT pg_switch_wal()")
    execute(owner, "CHECKPOINT")
    filler = str(mount / "filler")
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        for block in (1 << 20, 4096):  # MB by MB, then page by page
            try:
                while True:
                    os.write(fd, b"\0" * block)
            except OSError:
                pass
    finally:
        os.close(fd)
    os.truncate(filler, os.path.getsize(filler) - leave_bytes)
    return filler


def test_full_disk_stops_a_plain_ingest_and_is_ridden_out_by_the_follower(small_disk, log_set, clean, tmp_path,
                                                                          figures):
    """With the database's disk full, a plain ingest exits 2 saying so; the follower waits (one line) and, once
    space is freed, loads everything: the table equals a clean load."""
    private, mount = small_disk
    owner, writer = fresh_database(private)
    filler = fill(mount, owner, 64 * 1024)
    plain = start_ingest(writer, log_set, log_dir=tmp_path)
    assert plain.wait(timeout=600) == 2
    errors = [line for line in stderr_of(plain).splitlines() if "error:" in line]
    assert len(errors) == 1 and "No space left on device" in errors[0], stderr_of(plain)
    follower = start_ingest(writer, log_set, follow=True, log_dir=tmp_path)
    try:
        wait_for(lambda: "retrying" in stderr_of(follower), "the follower's line about the full disk")
        full_since = time.monotonic()
        time.sleep(3)
        assert follower.poll() is None
        os.truncate(filler, 0)
        wait_for(lambda: state(owner) == clean, "the load once space is freed")
        full_s = time.monotonic() - full_since
    finally:
        text = stop(follower)
    assert text.count("No space left on device") == 1 and text.count("database back after") == 1, text
    figures("ingest with the database's disk full, then space freed", plain_exit_status=2,
            follower_waited_s=round(full_s, 1), jobs=len(clean[0]), lost=0, duplicated=0)
