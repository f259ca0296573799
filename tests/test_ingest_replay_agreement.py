"""The ingester (into the real PostgreSQL test database) and the replay read the same jobs from the same lines."""

import gzip
import os

import psycopg2
import pytest

from predictor.ingest.ingester import Ingester, expand_paths
from replay.traces.files import accounting_files
from replay.traces.readers import load_trace
from replay.traces.trace import ReadStats

T = 1775822400

# PBS Pro and Torque E records, each job described differently: what one parser must read alike for both.
LINES = [
    # PBS Pro, the usual request.
    "04/10/2026 12:10:00;E;1.svr;user=alice queue=workq ctime={0} start={1} end={2} Exit_status=0 "
    "Resource_List.ncpus=4 Resource_List.select=1:ncpus=4 Resource_List.walltime=01:00:00 exec_host=n1/0*4 "
    "exec_vnode=(n1:ncpus=4) resources_used.walltime=00:09:00",
    # PBS Pro with no ncpus or select in the record: the cores it was given.
    "04/10/2026 12:10:00;E;2.svr;user=alice queue=workq ctime={0} start={1} end={2} Exit_status=0 "
    "Resource_List.walltime=01:00:00 exec_host=n1/0*2+n2/0*2 exec_vnode=(n1:ncpus=2)+(n2:ncpus=2) "
    "resources_used.walltime=00:00:05",
    # Torque: nodes=N:ppn=P and a smaller ncpus; then nothing but exec_host, listing each core.
    "04/10/2026 12:10:00;E;3.torque;user=bob queue=batch ctime={0} qtime={0} start={1} end={2} Exit_status=0 "
    "Resource_List.ncpus=1 Resource_List.nodes=2:ppn=4 Resource_List.neednodes=2:ppn=4 "
    "Resource_List.walltime=01:00:00 exec_host=n1/0-3+n2/0-3 resources_used.walltime=00:10:00",
    "04/10/2026 12:10:00;E;4.torque;user=bob queue=batch ctime={0} start={1} end={2} Exit_status=0 "
    "Resource_List.walltime=01:00:00 exec_host=n3/0+n3/1+n3/2 resources_used.walltime=00:10:00",
    # A job-array subjob, and an id with brackets that is not one.
    "04/10/2026 12:00:00;Q;5[].svr;user=carol queue=workq ctime={0} array_indices=1-1",
    "04/10/2026 12:10:00;E;5[1].svr;user=carol queue=workq ctime={1} start={1} end={2} Exit_status=0 "
    "Resource_List.ncpus=1 Resource_List.walltime=01:00:00 exec_host=n4/0 resources_used.walltime=00:10:00",
    "04/10/2026 12:10:00;E;3073070.[hostname_1];user=carol queue=workq ctime={0} start={1} end={2} "
    "Exit_status=0 Resource_List.nodes=1:ppn=2 exec_host=n5/0-1 resources_used.walltime=00:10:00",
]


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "20260410"
    path.write_text("".join(line.format(T, T + 60, T + 660) + "\n" for line in LINES))
    return str(path)


def ingested(db, path):
    """``{job_id: (ncpus, runtime_s)}`` as the ingester stores them."""
    conn = psycopg2.connect(db.writer_dsn)
    try:
        ingester = Ingester(conn, on_reject=lambda *reject: pytest.fail("ingester rejected {}".format(reject)))
        ingester.ingest([path])
        ingester.close()
        with conn, conn.cursor() as cursor:
            cursor.execute("SELECT job_id, ncpus, runtime_s FROM completed_jobs")
            return {job_id: (ncpus, runtime) for job_id, ncpus, runtime in cursor.fetchall()}
    finally:
        conn.close()


def test_ingester_and_replay_agree_on_every_job(db, log):
    """Same jobs, same cores, same runtime, from the one accounting parser both use."""
    rejects = []
    replayed = {job.job_id: (job.ncpus, job.runtime_s)
                for job in load_trace([log], on_reject=lambda *reject: rejects.append(reject)).jobs}
    assert rejects == []
    assert replayed == ingested(db, log)
    assert replayed == {"1.svr": (4, 540), "2.svr": (4, 5), "3.torque": (8, 600), "4.torque": (3, 600),
                        "5[1].svr": (1, 600), "3073070.[hostname_1]": (2, 600)}


def end_line(job_id):
    return LINES[0].format(T, T + 60, T + 660).replace(";1.svr;", ";{};".format(job_id)) + "\n"


@pytest.fixture
def mixed_directory(tmp_path):
    """An accounting directory as sites have them: daily files, archived ones, and files that are not logs."""
    (tmp_path / "20260410").write_text(end_line("10.svr"))
    (tmp_path / "20260411.gz").write_bytes(gzip.compress(end_line("11.svr").encode()))
    (tmp_path / "20260412.gz").write_text(end_line("12.svr"))  # named .gz, never compressed
    (tmp_path / "20260413").write_bytes(gzip.compress(end_line("13.svr").encode()))  # compressed, not renamed
    (tmp_path / "20260410~").write_text(end_line("99.svr"))  # an editor's backup
    (tmp_path / ".20260410.swp").write_text(end_line("98.svr"))
    (tmp_path / "README").write_text(end_line("97.svr"))
    return str(tmp_path)


def test_ingester_and_replay_pick_the_same_files(mixed_directory):
    """One rule for both commands: a directory's YYYYMMDD and YYYYMMDD.gz files, in name order."""
    picked = expand_paths([mixed_directory])[0]
    assert picked == accounting_files([mixed_directory], ReadStats())
    assert [os.path.basename(path) for path in picked] == ["20260410", "20260411.gz", "20260412.gz", "20260413"]


def test_ingester_and_replay_read_the_same_jobs_from_a_directory(db, mixed_directory):
    """Compression told by content, backups and other files left alone: the same jobs in both."""
    replayed = {job.job_id for job in load_trace([mixed_directory]).jobs}
    assert replayed == set(ingested(db, mixed_directory)) == {"10.svr", "11.svr", "12.svr", "13.svr"}
