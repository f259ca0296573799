"""The report's SQL aggregates agree with the numpy code they stand in for, on random tables.

PostgreSQL computes what the replay computes in numpy (replay.accuracy.metrics)
and what matplotlib computes for a box plot (predictor.cmdline.figures.box_stats); the
same jobs must give the same figures.
"""

import numpy as np
import psycopg2
import pytest

from predictor.cmdline.figures import box_stats
from predictor.cmdline.tables import runtime_class_masks
from predictor.report.measure import ALL, connect, distributions, measure
from predictor.report.selection import Selection
from replay.accuracy.metrics import error_metrics

EVERYTHING = Selection(0, 10 ** 12)


def random_jobs(seed, count=300):
    """Runtimes over every class, walltimes above them, soft walltimes either side of them; a few without."""
    rng = np.random.default_rng(seed)
    runtime = np.minimum(rng.lognormal(8.5, 2.0, count).astype(np.int64), 400000)
    walltime = runtime + rng.integers(0, 200000, count)
    soft = np.maximum(1, (runtime * rng.uniform(0.3, 2.0, count)).astype(np.int64) + 900)
    has_soft = rng.random(count) > 0.1
    return runtime, walltime, np.where(has_soft, soft, -1)


def load(db, runtime, walltime, soft):
    conn = psycopg2.connect(db.dsn)
    try:
        with conn, conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO completed_jobs (job_id, user_name, runtime_s, walltime_s, soft_walltime_s, end_time)"
                " VALUES (%s, %s, %s, %s, %s, 1000)",
                [(str(index), "u{}".format(index % 7), int(r), int(w), None if s < 0 else int(s))
                 for index, (r, w, s) in enumerate(zip(runtime, walltime, soft))])
    finally:
        conn.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_shares_and_errors_agree_with_the_replays_metrics(db, seed):
    """Under-estimated share and mean/median |error| of the soft walltime: SQL = replay's error_metrics."""
    runtime, walltime, soft = random_jobs(seed)
    load(db, runtime, walltime, soft)
    conn = connect(db.reader_dsn)
    try:
        row = next(row for row in measure(conn, EVERYTHING).accuracy if row[:2] == (ALL, "soft walltime"))
    finally:
        conn.close()
    _, _, under, _, _, _, mean_error, median_error, _, _ = error_metrics(runtime, soft, walltime)
    jobs = int(np.count_nonzero(soft >= 0))
    assert (row[2], row[3] / jobs, row[5] / jobs, row[6]) == (jobs, pytest.approx(under), pytest.approx(mean_error),
                                                              pytest.approx(median_error))


@pytest.mark.parametrize("seed", [4, 5])
def test_box_statistics_agree_with_matplotlib(db, seed):
    """Quartiles and whiskers per class and estimate: SQL = matplotlib's boxplot_stats on the same errors."""
    runtime, walltime, soft = random_jobs(seed)
    load(db, runtime, walltime, soft)
    conn = connect(db.reader_dsn)
    try:
        boxes = distributions(conn, EVERYTHING, {"soft walltime": 1, "walltime": 1}).boxes
    finally:
        conn.close()
    measured = soft >= 0
    for name, mask in runtime_class_masks(runtime):
        for estimate, values in (("soft walltime", soft), ("walltime", walltime)):
            expected = box_stats((values - runtime)[mask & measured])
            got = boxes[name][estimate]
            assert got["jobs"] == expected["jobs"]
            for key in ("q1", "med", "q3", "whislo", "whishi"):
                assert got[key] == pytest.approx(expected[key], nan_ok=True), (name, estimate, key)
