"""predictor.report.summary: the per-user comparison and the tables built from the aggregates."""

from predictor.report.measure import Measured
from predictor.report.selection import Selection
from predictor.report.summary import build_report, compare_users


def test_top_gains_largest_per_job_first_ties_by_name():
    """Seven users gaining: the five largest gains per job, equal gains in user-name order."""
    rows = [("u{}".format(gain), 2, 1000, 1000 + 2 * gain) for gain in (10, 50, 20, 70, 30, 60)] + [
        ("a60", 1, 0, 60)]
    users = compare_users(rows)
    assert [row[0] for row in users.gains] == ["u70", "a60", "u60", "u50", "u30"]
    assert users.gains[0] == ("u70", 2, 570.0, 500.0, 70.0) and users.losses == ()


def test_losses_and_ties_counted_apart():
    """A user with a larger soft walltime error loses, one with equal errors ties; no user without jobs."""
    users = compare_users([("win", 1, 10, 20), ("lose", 2, 40, 20), ("tie", 3, 9, 9), ("none", 0, 0, 0)])
    assert (users.compared, users.better, users.equal, users.worse) == (3, 1, 1, 1)
    assert users.losses == (("lose", 2, 10.0, 20.0, 10.0),)


def test_classes_without_jobs_get_rows():
    """Every runtime class and estimate has a row, with no figures where there were no jobs."""
    measured = Measured((("all", 1, 1, 0), ("<=2h", 1, 1, 0)),
                        (("all", "soft walltime", 1, 0, 1, 60, 60.0, 0.5, 0.5),), ())
    accuracy = build_report(Selection(0, 86400), measured).tables[1].rows
    assert len(accuracy) == 8 and accuracy[0][2:5] == (1, 0.0, 1.0)
    assert accuracy[-1] == (">24h", "walltime", 0, None, None, None, None, None, None)
