"""The ingester (into the real PostgreSQL test database) and the replay read the same jobs from the same lines."""

import psycopg2
import pytest

from predictor.ingest import Ingester
from replay.traces.readers import load_trace

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
