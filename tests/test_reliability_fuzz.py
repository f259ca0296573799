"""Bad input, fuzzed: mutated and generated lines through the ingester and the replay readers.

Mutants of real-looking lines (tests/fuzzlines.py: truncated, fields dropped
or doubled, huge and negative values, negative durations, non-UTF-8 and NUL
bytes, odd job ids, broken headers and quotes...) go through
``python -m predictor ingest`` into the real database and through
``replay.traces.readers.load_trace``; Hypothesis-generated logs go through both too.
Nothing may crash; every bad line is reported as ``file:line``, exactly once;
what the ingester stored is exactly what a line-by-line model of the parser
says (nothing lost, nothing extra); and each mutation that must not change a
record (fields reordered, CRLF, tabs or NBSP in a name...) reads as its seed.
Full form (``-m slow``): 100,000 mutated lines per reader.
"""

import os
import subprocess
import sys
import time

import psycopg2
import pytest
from conftest import empty_tables
from fuzzlines import IGNORED, OPENPBS_RECORDS, REJECT, REJECT_IF_END, SAME, pbs_mutants, swf_mutants
from hypothesis import HealthCheck, given, settings
from reliability import (
    figures,  # noqa: F401 (a fixture)
    predictor_cli,
    rejections,
    sizes,
)
from strategies import accounting_logs

from predictor.accounting.records import completed_job, parse_fields, parse_record
from predictor.errors import AccountingError
from predictor.ingest.chunks import MAX_NAME_BYTES
from predictor.queries import COLUMNS, job_values
from replay.traces.convert import convert
from replay.traces.readers import load_trace

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SWF_TRACE = os.path.join(ROOT, "traces", "HPC2N-2002-subset.swf")
LINES = sizes(5000, 100000)
GENERATED_LOGS = sizes(6, 200)
FILES = ("20260410", "20260411", "20260412", "20260413")


# --- the model: what the ingester's parser makes of one line -----------------------------

def model_of_line(raw):
    """``("reject", None)``, ``("job", CompletedJob)`` or ``("nothing", None)`` for one line."""
    try:
        text = raw.rstrip(b"\r").decode("utf-8")
        if not text or text.isspace():
            return "nothing", None
        record = parse_record(text)
        if record.record_type != "E":
            return "nothing", None
        job = completed_job(record, parse_fields(record.body))
    except (UnicodeDecodeError, AccountingError):
        return "reject", None
    return ("nothing", None) if job is None else ("job", job)


def model_of_files(files):
    """``(rejected (path, line) set, expected rows by job id)``: the last E record of a job wins."""
    rejected, rows = set(), {}
    for path, lines in files.items():
        for line_no, raw in enumerate(lines, 1):
            verdict, job = model_of_line(raw)
            if verdict == "reject":
                rejected.add((path, line_no))
            elif job is not None:
                rows.pop(job.job_id, None)
                rows[job.job_id] = job_values(job)
    return rejected, rows


def stored_rows(dsn):
    conn = psycopg2.connect(dsn)
    try:
        with conn, conn.cursor() as cursor:
            cursor.execute("SELECT {} FROM completed_jobs".format(", ".join(COLUMNS)))
            return {row[0]: row for row in cursor.fetchall()}
    finally:
        conn.close()


def write_files(directory, mutants):
    """Spread the mutants over daily files; ``{path: [line bytes]}`` and ``{(path, line_no): mutant}``."""
    files, placed = {}, {}
    per_file = -(-len(mutants) // len(FILES))
    for index, name in enumerate(FILES):
        path = os.path.join(str(directory), name)
        chunk = mutants[index * per_file:(index + 1) * per_file]
        with open(path, "wb") as out:
            out.write(b"".join(mutant.line + b"\n" for mutant in chunk))
        files[path] = [mutant.line for mutant in chunk]
        placed.update(((path, line_no), mutant) for line_no, mutant in enumerate(chunk, 1))
    return files, placed


def ingest(dsn, directory):
    """Run the ingester CLI; its ``path:line`` rejections (a crash fails the test)."""
    result = predictor_cli("ingest", "--dsn", dsn, "--max-errors", "1000000000", directory)
    assert result.returncode in (0, 1) and "Traceback" not in result.stderr, result.stderr[-3000:]
    return rejections(result.stderr)


def check_ingested(files, reported, stored):
    """Reported lines = the model's bad lines; stored rows = the model's rows (refusals aside: by the database,
    or before it for a name longer than it can index)."""
    rejected, expected = model_of_files(files)
    refused = {key: message for key, message in reported.items() if key not in rejected}
    assert all("refused by the database" in message or "the history stores" in message
               for message in refused.values()), refused
    assert rejected <= set(reported), sorted(rejected - set(reported))[:10]
    assert stored == {job_id: row for job_id, row in expected.items() if job_id in stored}, "rows changed or added"
    missing = [row for job_id, row in expected.items() if job_id not in stored]
    assert len(missing) <= len(refused), "rows lost"
    too_long = [row for row in missing if any(isinstance(value, str) and len(value.encode()) > MAX_NAME_BYTES
                                              for value in row)]
    assert len(missing) - len(too_long) <= sum("refused by the database" in m for m in refused.values()), \
        "rows lost"
    return rejected, refused


def check_expectations(placed, reported_keys, is_bad_end):
    """Each mutant's own promise: reported when it must be, not when it must not be."""
    for key, mutant in placed.items():
        must_report = mutant.expect == REJECT or (mutant.expect == REJECT_IF_END and is_bad_end(mutant))
        if must_report:
            assert key in reported_keys, (key, mutant.how, mutant.line[:200])
        elif mutant.expect in (SAME, IGNORED):
            assert key not in reported_keys, (key, mutant.how, mutant.line[:200])


def is_end_record(mutant):
    return mutant.seed.split(";", 2)[1] == "E"


def same_as_seed(mutant):
    """A SAME mutant parses to what its seed parses to."""
    return model_of_line(mutant.line) == model_of_line(mutant.seed.encode("utf-8"))


# --- seeds ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pbs_seeds(tmp_path_factory):
    """The OpenPBS records of pbs-facts.md and the lines ``python -m replay convert`` makes of the HPC2N trace."""
    out = tmp_path_factory.mktemp("converted")
    subprocess.run([sys.executable, "-m", "replay", "convert", SWF_TRACE, str(out) + os.sep], check=True,
                   capture_output=True, cwd=ROOT)
    converted = []
    for name in sorted(os.listdir(str(out))):
        with open(os.path.join(str(out), name), encoding="utf-8") as log:
            converted.extend(log.read().splitlines())
    assert len(converted) > 5000
    return OPENPBS_RECORDS * (len(converted) // 40) + converted


@pytest.fixture(scope="module")
def swf_seeds():
    with open(SWF_TRACE, encoding="utf-8") as trace:
        return [line for line in trace.read().splitlines() if line.strip() and not line.startswith(";")]


# --- mutated accounting lines -------------------------------------------------------------

@pytest.mark.parametrize("count", LINES)
def test_mutated_lines_through_the_ingester(db, tmp_path, pbs_seeds, figures, count):
    """No crash; every bad line reported once as file:line; stored rows exactly the model's."""
    mutants = pbs_mutants(pbs_seeds, count, seed=20261122)
    files, placed = write_files(tmp_path, mutants)
    started = time.monotonic()
    reported = ingest(db.writer_dsn, str(tmp_path))
    elapsed = time.monotonic() - started
    rejected, refused = check_ingested(files, reported, stored_rows(db.dsn))
    check_expectations(placed, set(reported), lambda mutant: is_end_record(mutant))
    assert all(same_as_seed(mutant) for mutant in mutants if mutant.expect == SAME)
    figures("fuzz: mutated accounting lines, ingester", lines=count, files=len(files), reported=len(reported),
            refused_by_database=len(refused), must_reject=sum(m.expect == REJECT for m in mutants),
            crashes=0, lost=0, seconds=round(elapsed, 1))


@pytest.mark.parametrize("count", LINES)
def test_mutated_lines_through_the_replay_reader(tmp_path, pbs_seeds, figures, count):
    """load_trace: no crash, each report a real file:line once, every line that must be bad reported; convert runs."""
    mutants = pbs_mutants(pbs_seeds, count, seed=20261122)
    (tmp_path / "fuzz").mkdir()
    files, placed = write_files(tmp_path / "fuzz", mutants)
    reports = []
    trace = load_trace([str(tmp_path / "fuzz")], "pbs", lambda path, line_no, message: reports.append(
        (path, line_no)))
    reported = set(reports)
    assert len(reported) == len(reports) == trace.stats.rejected and all(key in placed for key in reported)
    rejected, _ = model_of_files(files)
    assert rejected <= reported  # the replay checks more than the ingester, never less
    check_expectations(placed, reported, is_end_record)
    seeds_trace = seed_trace(tmp_path / "seeds", mutants)
    by_id = {job.job_id: job for job in trace.jobs}
    same = [m for m in mutants if m.expect == SAME and is_end_record(m)]
    assert all(by_id.get(job_id(m)) == seeds_trace.get(job_id(m)) for m in same)
    convert([str(tmp_path / "fuzz")], str(tmp_path / "converted.swf"), "pbs")  # and on through the writer
    figures("fuzz: mutated accounting lines, replay reader", lines=count, reported=len(reported), crashes=0,
            jobs=len(trace.jobs))


def job_id(mutant):
    return mutant.seed.split(";", 3)[2]


def seed_trace(directory, mutants):
    """The jobs the replay reads from the mutants' seeds, unmutated: job id -> Job."""
    os.makedirs(str(directory))
    with open(os.path.join(str(directory), "20260410"), "w", encoding="utf-8") as out:
        out.write("".join(mutant.seed + "\n" for mutant in mutants))
    return {job.job_id: job for job in load_trace([str(directory)], "pbs").jobs}


# --- mutated SWF lines ---------------------------------------------------------------------

@pytest.mark.parametrize("count", LINES)
def test_mutated_swf_lines_through_the_replay_reader(tmp_path, swf_seeds, figures, count):
    """read_swf: no crash, every bad line reported once, lines that must read as their seed do; convert runs."""
    mutants = swf_mutants(swf_seeds, count, seed=20261122)
    fuzzed, seeds = tmp_path / "fuzz.swf", tmp_path / "seeds.swf"
    fuzzed.write_bytes(b"".join(mutant.line + b"\n" for mutant in mutants))
    seeds.write_text("".join(mutant.seed + "\n" for mutant in mutants))
    reports = []
    trace = load_trace([str(fuzzed)], "swf", lambda path, line_no, message: reports.append((path, line_no)))
    placed = {(str(fuzzed), line_no): mutant for line_no, mutant in enumerate(mutants, 1)}
    reported = set(reports)
    assert len(reported) == len(reports) == trace.stats.rejected and all(key in placed for key in reported)
    check_expectations(placed, reported, lambda mutant: True)
    expected = {job.job_id: job for job in load_trace([str(seeds)], "swf").jobs}
    found = {job.job_id: job for job in trace.jobs}
    for line_no, mutant in enumerate(mutants, 1):
        number = mutant.seed.split()[0]
        if mutant.expect == SAME:
            assert found.get(number) == expected.get(number), (line_no, mutant.how, mutant.line)
        elif mutant.expect in (IGNORED, REJECT):
            assert number not in found, (line_no, mutant.how, mutant.line)
    convert([str(fuzzed)], str(tmp_path / "converted") + os.sep, "swf")  # and on through the writer
    figures("fuzz: mutated SWF lines, replay reader", lines=count, reported=len(reported), crashes=0,
            jobs=len(trace.jobs))


# --- generated logs ---------------------------------------------------------------------------

@pytest.mark.parametrize("examples", GENERATED_LOGS)
def test_generated_logs_through_both_readers(database, tmp_path_factory, figures, examples):
    """Hypothesis logs: the ingester stores exactly the model's rows and reports exactly its bad lines;
    the replay reader reports at least those."""
    seen = []

    @settings(max_examples=examples, suppress_health_check=list(HealthCheck), deadline=None)
    @given(accounting_logs())
    def check(lines):
        empty_tables(database)
        directory = tmp_path_factory.mktemp("generated")
        path = os.path.join(str(directory), "20260410")
        with open(path, "wb") as log:
            log.write(b"".join(line + b"\n" for line in lines))
        reported = ingest(database.writer_dsn, str(directory))
        rejected, _ = check_ingested({path: lines}, reported, stored_rows(database.dsn))
        replay_reports = []
        try:
            load_trace([str(directory)], "pbs", lambda p, n, m: replay_reports.append((p, n)))
        except ValueError as err:  # TraceError: no job that ran; never another exception
            assert "no job that ran" in str(err)
        assert rejected <= set(replay_reports)
        seen.append(len(lines))

    check()
    figures("fuzz: Hypothesis-generated logs, ingester and replay reader", examples=len(seen),
            lines=sum(seen), crashes=0)
