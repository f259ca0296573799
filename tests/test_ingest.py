"""predictor.ingest.ingester against the real PostgreSQL server."""

import gzip
import io
import multiprocessing
import os
import signal
import sys
import uuid
import zlib

import psycopg2
import pytest
from conftest import admin_execute, dsn_for

from predictor.db.schema import init_schema
from predictor.errors import PredictorError
from predictor.ingest.ingester import Ingester, expand_paths


def e_line(job_id, user="alice", start=1000, end=2000, walltime="01:00:00", extra=""):
    return ("04/10/2026 12:00:05;E;{};user={} queue=workq ctime={} start={} end={} Exit_status=0 "
            "Resource_List.walltime={} Resource_List.ncpus=2{}\n").format(job_id, user, start - 10, start, end,
                                                                          walltime, extra)


def q_line(job_id):
    return "04/10/2026 12:00:00;Q;{};user=alice queue=workq ctime=1 qtime=1\n".format(job_id)


@pytest.fixture
def conn(db):
    """A connection with the writer role, as ingestion runs in production."""
    connection = psycopg2.connect(db.writer_dsn)
    yield connection
    connection.close()


def rows(conn):
    with conn, conn.cursor() as cursor:
        cursor.execute("SELECT job_id, user_name, runtime_s FROM completed_jobs ORDER BY job_id")
        return cursor.fetchall()


def run(conn, *paths, lines_per_chunk=10000, workers=0):
    """Ingest and return (stats, rejections, warnings)."""
    rejections, warnings = [], []
    ingester = Ingester(conn, lines_per_chunk, on_reject=lambda *r: rejections.append(r),
                        on_warning=warnings.append, workers=workers)
    try:
        return ingester.ingest([str(p) for p in paths]), rejections, warnings
    finally:
        ingester.close()


def test_loads_end_records_only(conn, tmp_path):
    """E records become rows; Q and S lines are read and ignored."""
    log = tmp_path / "20260410"
    log.write_text(q_line("1.svr") + e_line("1.svr") + e_line("2.svr", user="bob", end=1500))
    stats, rejections, _ = run(conn, log)
    assert rows(conn) == [("1.svr", "alice", 1000), ("2.svr", "bob", 500)]
    assert (stats.lines, stats.end_records, stats.jobs, rejections) == (3, 2, 2, [])


def test_second_run_reads_nothing_new(conn, tmp_path):
    """Re-running over the same file reads no line again and duplicates nothing."""
    log = tmp_path / "20260410"
    log.write_text(e_line("1.svr") + e_line("2.svr"))
    run(conn, log)
    stats, _, _ = run(conn, log)
    assert stats.lines == 0 and len(rows(conn)) == 2


def test_reload_after_progress_loss_duplicates_nothing(conn, db, tmp_path):
    """Even with the progress forgotten, loading again upserts the same rows."""
    log = tmp_path / "20260410"
    log.write_text(e_line("1.svr") + e_line("2.svr"))
    run(conn, log)
    admin_execute_in(db, "TRUNCATE ingest_progress")
    stats, _, _ = run(conn, log)
    assert stats.lines == 2 and len(rows(conn)) == 2


def admin_execute_in(db, sql):
    owner = psycopg2.connect(db.dsn)
    try:
        with owner, owner.cursor() as cursor:
            cursor.execute(sql)
    finally:
        owner.close()


def test_resumes_after_appended_lines(conn, tmp_path):
    """Lines appended later are read from the saved offset, with correct line numbers."""
    log = tmp_path / "20260410"
    log.write_text(e_line("1.svr"))
    run(conn, log)
    with log.open("a") as handle:
        handle.write("garbage\n" + e_line("2.svr"))
    stats, rejections, _ = run(conn, log)
    assert stats.lines == 2 and [r[1] for r in rejections] == [2] and len(rows(conn)) == 2


def test_half_written_line_left_for_next_pass(conn, tmp_path):
    """A last line without its newline is not read until it is complete."""
    log = tmp_path / "20260410"
    whole = e_line("2.svr")
    log.write_text(e_line("1.svr") + whole[:30])
    first, rejections, _ = run(conn, log)
    with log.open("a") as handle:
        handle.write(whole[30:])
    second, _, _ = run(conn, log)
    assert (first.lines, second.lines, rejections) == (1, 1, [])
    assert [r[0] for r in rows(conn)] == ["1.svr", "2.svr"]


def test_bad_lines_reported_with_line_number_and_rest_loaded(conn, tmp_path):
    """Each malformed line is reported as path:line with its reason; the others load."""
    log = tmp_path / "20260410"
    log.write_bytes((e_line("1.svr") + e_line("2.svr", end=10) + "junk\n").encode() + b"\xff\xfe\n"
                    + e_line("3.svr").encode())
    stats, rejections, _ = run(conn, log)
    assert [(os.path.basename(p), n) for p, n, _ in rejections] == [("20260410", 2), ("20260410", 3),
                                                                     ("20260410", 4)]
    assert "field end" in rejections[0][2] and "UTF-8" in rejections[2][2]
    assert stats.rejected == 3 and [r[0] for r in rows(conn)] == ["1.svr", "3.svr"]


def committed_line(dsn):
    """The line number ingest_progress holds, as another session sees it (0: none yet)."""
    check = psycopg2.connect(dsn)
    try:
        with check, check.cursor() as cursor:
            cursor.execute("SELECT coalesce(max(line_no), 0) FROM ingest_progress")
            return cursor.fetchone()[0]
    finally:
        check.close()


def test_bad_lines_reported_before_their_chunk_commits(db, conn, tmp_path):
    """A bad line is reported while its chunk is not yet committed: an ingester killed at any instant after the
    commit has reported it already (killed before, the next run reads the chunk again and reports it)."""
    log = tmp_path / "20260410"
    log.write_text(e_line("1.svr") + "junk\n" + e_line("2.svr") + e_line("3.svr") + "junk\n" + e_line("4.svr"))
    seen = []
    ingester = Ingester(conn, 2, on_reject=lambda path, line_no, message: seen.append((line_no, committed_line(
        db.dsn))))
    try:
        ingester.ingest([str(log)])
    finally:
        ingester.close()
    assert seen == [(2, 0), (5, 4)] and committed_line(db.dsn) == 6


def test_refused_rows_reported_before_their_chunk_commits(latin1_database, tmp_path):
    """The same for a row the database refuses (found by writing the chunk row by row)."""
    log = tmp_path / "20260410"
    log.write_text(e_line("1.svr") + e_line("2.svr", user="用户") + e_line("3.svr"), encoding="utf-8")
    seen = []
    conn = psycopg2.connect(latin1_database)
    ingester = Ingester(conn, on_reject=lambda path, line_no, message: seen.append(
        (line_no, committed_line(latin1_database))))
    try:
        ingester.ingest([str(log)])
    finally:
        ingester.close()
        conn.close()
    assert seen == [(2, 0)] and committed_line(latin1_database) == 3


def test_bad_line_reported_once_when_its_chunk_commits_on_a_new_connection(db, tmp_path):
    """The connection is lost between a chunk's report and its commit: the chunk is read again on a new
    connection and committed, its bad line reported once."""
    log = tmp_path / "20260410"
    log.write_text(e_line("1.svr") + "junk\n" + e_line("2.svr"))
    reported = []

    def on_reject(path, line_no, message):
        reported.append(line_no)
        if len(reported) == 1:  # the server ends the session before the COMMIT
            admin_execute("SELECT pg_terminate_backend({})".format(ingester.store.conn().get_backend_pid()))

    ingester = Ingester(lambda: psycopg2.connect(db.writer_dsn), on_reject=on_reject)
    try:
        stats = ingester.ingest([str(log)])
    finally:
        ingester.close()
    assert reported == [2] and stats.rejected == 1 and committed_line(db.dsn) == 3
    with psycopg2.connect(db.dsn) as check, check.cursor() as cursor:
        cursor.execute("SELECT job_id FROM completed_jobs ORDER BY 1")
        assert cursor.fetchall() == [("1.svr",), ("2.svr",)]


def test_directory_read_in_name_order_skipping_hidden(tmp_path):
    """A directory expands to its files sorted by name, hidden files skipped."""
    for name in ["20260411", "20260410", ".lock"]:
        (tmp_path / name).write_text("")
    files, missing = expand_paths([str(tmp_path), str(tmp_path / "nope")])
    assert [os.path.basename(f) for f in files] == ["20260410", "20260411"]
    assert missing == [str(tmp_path / "nope")]


def test_truncated_file_read_again_from_start(conn, tmp_path):
    """A file shorter than the saved offset is read from the start, with a warning."""
    log = tmp_path / "20260410"
    log.write_text(e_line("1.svr") + e_line("2.svr"))
    run(conn, log)
    log.write_text(e_line("1.svr"))
    stats, _, warnings = run(conn, log)
    assert stats.lines == 1 and "truncated" in warnings[0]


def test_replaced_file_read_again_from_start(conn, tmp_path):
    """A file whose bytes before the offset changed is read from the start."""
    log = tmp_path / "20260410"
    log.write_text(e_line("1.svr") + e_line("2.svr"))
    run(conn, log)
    log.write_text(e_line("1.svr") + e_line("3.svr") + e_line("4.svr"))
    stats, _, warnings = run(conn, log)
    assert stats.lines == 3 and warnings and [r[0] for r in rows(conn)] == ["1.svr", "2.svr", "3.svr", "4.svr"]


def test_small_chunks_and_repeated_job_in_one_chunk(conn, tmp_path):
    """Many transactions, and a job ending twice in one chunk keeps its last record."""
    log = tmp_path / "20260410"
    log.write_text("".join(e_line("{}.svr".format(i)) for i in range(7)) + e_line("6.svr", end=1001))
    stats, _, _ = run(conn, log, lines_per_chunk=2)
    assert len(rows(conn)) == 7 and dict((r[0], r[2]) for r in rows(conn))["6.svr"] == 1


def test_progress_committed_with_rows(conn, tmp_path):
    """The saved offset is the end of the last complete line read."""
    log = tmp_path / "20260410"
    text = e_line("1.svr") + e_line("2.svr")
    log.write_text(text + "partial")
    run(conn, log)
    with conn, conn.cursor() as cursor:
        cursor.execute("SELECT offset_bytes, line_no FROM ingest_progress")
        assert cursor.fetchall() == [(len(text.encode()), 2)]


def test_follow_picks_up_growth_and_new_files(conn, tmp_path):
    """--follow loads appended lines and a new day's file."""
    (tmp_path / "20260410").write_text(e_line("1.svr"))
    steps = iter([
        lambda: (tmp_path / "20260410").open("a").write(e_line("2.svr")),
        lambda: (tmp_path / "20260411").write_text(e_line("3.svr")),
    ])
    passes = []

    def sleep(_seconds):
        passes.append(1)
        next(steps, lambda: None)()

    ingester = Ingester(conn)
    ingester.follow([str(tmp_path)], interval_s=0, should_stop=lambda: len(passes) >= 3, sleep=sleep)
    assert [r[0] for r in rows(conn)] == ["1.svr", "2.svr", "3.svr"]


def test_follow_summary_counts_each_file_once(conn, tmp_path):
    """However many passes read a growing file, the summary counts it as one file."""
    log = tmp_path / "20260410"
    log.write_text(e_line("1.svr"))
    passes = []

    def sleep(_seconds):
        passes.append(1)
        with log.open("a") as grown:
            grown.write(e_line("{}.svr".format(len(passes) + 1)))

    ingester = Ingester(conn)
    ingester.follow([str(tmp_path)], interval_s=0, should_stop=lambda: len(passes) >= 5, sleep=sleep)
    assert (ingester.stats.files, ingester.stats.jobs) == (1, 5)


@pytest.fixture
def latin1_database():
    """A site database created in LATIN1: it refuses characters outside Latin-1."""
    name = "swt_latin1_{}".format(uuid.uuid4().hex[:8])
    admin_execute("CREATE DATABASE {} ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0".format(name))
    try:
        init_schema(dsn_for(name))
        yield dsn_for(name)
    finally:
        admin_execute("DROP DATABASE IF EXISTS {} WITH (FORCE)".format(name))


def test_row_refused_by_database_is_reported_and_others_load(latin1_database, tmp_path):
    """A job the database cannot store is reported at its line; the batch's other jobs load."""
    log = tmp_path / "20260410"
    log.write_text(e_line("1.svr") + e_line("2.svr", user="用户") + e_line("3.svr"), encoding="utf-8")
    conn = psycopg2.connect(latin1_database)
    try:
        stats, rejections, _ = run(conn, log)
        assert [(n, "refused by the database" in m) for _, n, m in rejections] == [(2, True)]
        assert [r[0] for r in rows(conn)] == ["1.svr", "3.svr"] and stats.jobs == 2
    finally:
        conn.close()


def test_oversized_name_rejected_before_the_database(conn, tmp_path):
    """A user name of 5 kB is reported at its line and field without reaching the database; the rest loads,
    and the next run goes past it."""
    log = tmp_path / "20260410"
    log.write_text(e_line("1.svr") + e_line("2.svr", user="u" * 5000) + e_line("3.svr"))
    stats, rejections, _ = run(conn, log)
    assert [(n, m.split(":")[0]) for _, n, m in rejections] == [(2, "field user")] and "5000 bytes" in rejections[0][2]
    assert [r[0] for r in rows(conn)] == ["1.svr", "3.svr"] and stats.jobs == 2
    (tmp_path / "20260411").write_text(e_line("4.svr"))
    again, rejections, _ = run(conn, log, tmp_path / "20260411")
    assert rejections == [] and again.jobs == 1


def incompressible(length, seed=7):
    """Random CJK text: PostgreSQL cannot compress it below the index entry limit."""
    import random
    rng = random.Random(seed)
    return "".join(chr(rng.randrange(0x4E00, 0x9FFF)) for _ in range(length))


@pytest.mark.parametrize("job_id, user", [("2.svr", incompressible(2000)), (incompressible(2000), "bob")])
def test_row_refused_by_an_index_limit_is_isolated(conn, tmp_path, monkeypatch, job_id, user):
    """A row the server refuses with SQLSTATE 54000 (index row too big, not a data error) is reported at its
    line and skipped; the chunk's other jobs and the next file load, and a rerun goes past it."""
    monkeypatch.setattr("predictor.ingest.chunks.MAX_NAME_BYTES", 10 ** 9)
    log, later = tmp_path / "20260410", tmp_path / "20260411"
    log.write_text(e_line("1.svr") + e_line(job_id, user=user) + e_line("3.svr"), encoding="utf-8")
    later.write_text(e_line("4.svr"))
    stats, rejections, _ = run(conn, log, later)
    assert [(n, "refused by the database: index row" in m) for _, n, m in rejections] == [(2, True)]
    assert [r[0] for r in rows(conn)] == ["1.svr", "3.svr", "4.svr"] and stats.jobs == 3
    again, rejections, _ = run(conn, log, later)
    assert (again.lines, rejections) == (0, [])


def test_record_after_a_cut_record_on_the_same_line_is_salvaged(conn, tmp_path):
    """pbs_server died mid-record and its next record was appended to that line: the cut record is reported,
    the whole one after it loaded."""
    log = tmp_path / "20260410"
    log.write_text(e_line("1.svr") + "04/10/2026 12:00:05;E;2.svr;user=al" + e_line("3.svr", user="bob")
                   + e_line("4.svr"))
    stats, rejections, _ = run(conn, log)
    assert [(n, "cut short" in m) for _, n, m in rejections] == [(2, True)]
    assert rows(conn) == [("1.svr", "alice", 1000), ("3.svr", "bob", 1000), ("4.svr", "alice", 1000)]


def test_cut_line_without_a_whole_record_after_it_is_reported(conn, tmp_path):
    """A cut record followed by another cut one is one malformed line, nothing more."""
    log = tmp_path / "20260410"
    log.write_text(e_line("1.svr") + "04/10/2026 12:00:05;E;2.svr;user=al" + "04/10/2026 12:00:06;E;3.svr;us\n"
                   .replace("\\n", "\n") + e_line("4.svr"))
    stats, rejections, _ = run(conn, log)
    assert [n for _, n, _ in rejections] == [2]
    assert [r[0] for r in rows(conn)] == ["1.svr", "4.svr"]


def test_every_line_read_once_across_chunks_and_batches(conn, tmp_path, monkeypatch):
    """With many read chunks and many commits, each line is read exactly once."""
    monkeypatch.setattr("predictor.accounting.logfile._CHUNK", 300)
    log = tmp_path / "20260410"
    log.write_text("".join(e_line("{}.svr".format(i)) for i in range(40)))
    stats, rejections, _ = run(conn, log, lines_per_chunk=3)
    assert (stats.lines, stats.jobs, rejections) == (40, 40, [])
    again, _, warnings = run(conn, log)
    assert (again.lines, warnings) == (0, [])


def test_names_stored_verbatim_through_copy(conn, tmp_path):
    """Backslashes, a literal \\N, a tab inside quotes and non-ASCII survive the batch load."""
    users = ["back\\slash", "\\N", '"tab\there"', "o'brien", "Ωmega;--"]
    log = tmp_path / "20260410"
    log.write_text("".join(e_line("{}.svr".format(i), user=u) for i, u in enumerate(users)), encoding="utf-8")
    stats, rejections, _ = run(conn, log)
    assert rejections == [] and [r[1] for r in rows(conn)] == ["back\\slash", "\\N", "tab\there", "o'brien",
                                                                "Ωmega;--"]


def test_gzip_compressed_logs_are_read(conn, tmp_path):
    """Archived YYYYMMDD.gz files load like plain ones, and a re-run reads nothing."""
    with gzip.open(str(tmp_path / "20260410.gz"), "wt") as log:
        log.write(e_line("1.svr") + e_line("2.svr"))
    (tmp_path / "20260411").write_text(e_line("3.svr"))
    stats, rejections, _ = run(conn, tmp_path)
    again, _, warnings = run(conn, tmp_path)
    assert (stats.jobs, rejections, again.lines, warnings) == (3, [], 0, [])


def test_gzip_resume_from_saved_offset(conn, tmp_path):
    """A compressed file rewritten with more lines resumes after the lines already read."""
    path = str(tmp_path / "20260410.gz")
    with gzip.open(path, "wt") as log:
        log.write(e_line("1.svr"))
    run(conn, path)
    with gzip.open(path, "wt") as log:
        log.write(e_line("1.svr") + e_line("2.svr"))
    stats, _, warnings = run(conn, path)
    assert (stats.lines, warnings) == (1, []) and len(rows(conn)) == 2


def test_damaged_gzip_reported_and_other_files_load(conn, tmp_path):
    """A corrupt compressed file is named in a warning; the other files still load."""
    (tmp_path / "20260410.gz").write_bytes(b"\x1f\x8b this is not gzip")
    (tmp_path / "20260411").write_text(e_line("1.svr"))
    stats, _, warnings = run(conn, tmp_path)
    assert stats.unreadable == 1 and "20260410.gz: cannot read it" in warnings[0] and len(rows(conn)) == 1


def cut_gzip(path, jobs=30000):
    """Write ``jobs`` E records gzip-compressed to ``path``, cut at 3/4 of its bytes; the ids of the whole lines left.

    The ids are read with zlib, which gives every byte before the cut.
    """
    text = "".join(e_line("{}.svr".format(i), user="u{}".format(i * 7919 % 1009), end=2000 + i * 104729 % 99991)
                   for i in range(jobs)).encode()
    packed = io.BytesIO()
    with gzip.GzipFile(fileobj=packed, mode="wb", mtime=0) as out:
        out.write(text)
    cut = packed.getvalue()[:len(packed.getvalue()) * 3 // 4]
    path.write_bytes(cut)
    readable = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(cut)
    return ["{}.svr".format(i) for i in range(readable.count(b"\n"))]


def table_and_progress(conn):
    with conn, conn.cursor() as cursor:
        cursor.execute("SELECT * FROM completed_jobs ORDER BY job_id")
        jobs = cursor.fetchall()
        cursor.execute("SELECT path, head_sha1, tail_sha1, offset_bytes, line_no FROM ingest_progress")
        return jobs, cursor.fetchall()


def test_every_line_before_gzip_damage_loads_whatever_the_workers(conn, db, tmp_path):
    """A .gz cut at 3/4: one worker and three load every whole line before the cut, the same rows and progress."""
    log = tmp_path / "20260410.gz"
    readable = cut_gzip(log)
    loads = []
    for workers in (1, 3):
        empty_tables_of(db)
        stats, rejections, warnings = run(conn, log, lines_per_chunk=1000, workers=workers)
        loads.append(table_and_progress(conn))
        assert (stats.lines, stats.jobs, stats.unreadable, rejections, len(warnings)) == (
            len(readable), len(readable), 1, [], 1)
    assert sorted(row[0] for row in loads[0][0]) == sorted(readable)
    assert loads[0] == loads[1] and loads[0][1][0][4] == len(readable)


def test_damaged_gzip_named_with_the_first_line_not_read(conn, tmp_path):
    """The read error is one warning naming the file and the first line it could not give."""
    log = tmp_path / "20260410.gz"
    readable = cut_gzip(log, jobs=3000)
    _, _, warnings = run(conn, log, workers=2)
    assert len(warnings) == 1 and warnings[0].startswith("{}:{}: cannot read ".format(log, len(readable) + 1))


def test_rerun_over_damaged_gzip_neither_loses_nor_duplicates(conn, db, tmp_path):
    """Running again over the same cut .gz reads nothing new, keeps every row and reports the damage again."""
    log = tmp_path / "20260410.gz"
    readable = cut_gzip(log, jobs=3000)
    run(conn, log, lines_per_chunk=100, workers=2)
    first = table_and_progress(conn)
    again, _, warnings = run(conn, log, lines_per_chunk=100, workers=2)
    assert table_and_progress(conn) == first and len(first[0]) == len(readable)
    assert (again.lines, again.unreadable, len(warnings)) == (0, 1, 1)


def test_worker_processes_give_the_same_load_and_reports(conn, db, tmp_path):
    """Parsing in worker processes loads the same rows and reports the same lines, in order."""
    lines = [e_line("{}.svr".format(i), user="u{}".format(i % 3), end=2000 + i) if i % 7 else "junk {}\n".format(i)
             for i in range(60)]
    log = tmp_path / "20260410"
    log.write_text("".join(lines))
    inline = run(conn, log, lines_per_chunk=4)
    inline_rows = rows(conn)
    empty_tables_of(db)
    pooled = run(conn, log, lines_per_chunk=4, workers=2)
    assert rows(conn) == inline_rows and pooled[1] == inline[1] and pooled[1]
    assert (pooled[0].lines, pooled[0].jobs) == (inline[0].lines, inline[0].jobs) == (60, 51)


def empty_tables_of(db):
    admin_execute_in(db, "TRUNCATE completed_jobs, ingest_progress")


def caught_signals(pid):
    """The signal numbers process ``pid`` has a handler for (Linux /proc)."""
    with open("/proc/{}/status".format(pid)) as status:
        mask = int(next(line for line in status if line.startswith("SigCgt:")).split()[1], 16)
    return {number for number in range(1, 64) if mask >> (number - 1) & 1}


def test_workers_die_at_once_on_sigterm_whatever_the_parent_handles(conn, tmp_path):
    """The CLI turns SIGTERM into sys.exit before the pool forks; workers must not inherit that (hang at close)."""
    log = tmp_path / "20260410"
    log.write_text(e_line("1.svr"))
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    ingester = Ingester(conn, 10000, workers=2)
    try:
        ingester.ingest([str(log)])
        workers = multiprocessing.active_children()
        assert workers and all(signal.SIGTERM not in caught_signals(worker.pid) for worker in workers)
    finally:
        ingester.close()
        signal.signal(signal.SIGTERM, previous)


def test_locks_released_on_a_callers_connection(conn, db, tmp_path):
    """An ingester on a connection it was given leaves no lock behind once closed: another session may load."""
    log = tmp_path / "20260410"
    log.write_text(e_line("1.svr"))
    ingester = Ingester(conn)
    ingester.ingest([str(log)])
    other = psycopg2.connect(db.writer_dsn)
    try:
        with pytest.raises(PredictorError, match="another ingester is loading {}".format(tmp_path)):
            Ingester(other).ingest([str(log)])
        ingester.close()
        assert Ingester(other).ingest([str(log)]).lines == 0
    finally:
        other.close()


def test_progress_moves_within_one_big_file(conn, tmp_path):
    """One big plain file: the bar moves by bytes as its chunks are committed, not from 0/1 to 1/1 at the end;
    a compressed file moves it at its end."""
    log = tmp_path / "20260410"
    log.write_text("".join(e_line("{}.svr".format(number)) + "\n" for number in range(1, 101)))
    (tmp_path / "20260411.gz").write_bytes(gzip.compress((e_line("200.svr") + "\n").encode()))
    seen = []
    Ingester(conn, lines_per_chunk=10).ingest([str(tmp_path)], lambda done, total: seen.append((done, total)))
    total = os.path.getsize(str(log)) + os.path.getsize(str(tmp_path / "20260411.gz"))
    inside = [done for done, _ in seen if 0 < done < os.path.getsize(str(log))]
    assert len(inside) >= 5 and inside == sorted(inside) and seen[-1] == (total, total)
