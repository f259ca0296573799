"""How far a real PBS is from itself: the same workload recorded twice, beside the model. Not a test.

    python benchmarks/pbs_against_itself.py FIRST SECOND [FIRST SECOND ...]

Each argument is a recording folder as ``benchmarks/pbs_record.py`` writes it (``accounting/`` and
``site/``); FIRST and SECOND hold the same workload recorded twice on the same server. For each pair
one table: the whole-run outcomes of the second recording against the first (the server against
itself), and of the model against each recording, all measured alike (``python -m replay
fidelity``'s outcomes): jobs, starts within 2 s, mean |start error|, mean and median waits and their
differences. A real server does not repeat itself to the second: a job that ends a second later on
one run changes which job backfills there, and every start after it moves. The server's own spread
is the yardstick for the model's outcomes on a busy workload.

To record a workload again, give ``pbs_record.py`` the first recording's ``recording.json``.
"""

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from predictor.cmdline.rejects import RejectPrinter  # noqa: E402
from replay.fidelity.machine import site_model  # noqa: E402
from replay.fidelity.measure import repeat_outcomes, replay_outcomes  # noqa: E402
from replay.fidelity.outcomes import relative_difference  # noqa: E402
from replay.fidelity.records import read_records  # noqa: E402


def read(folder):
    rejects = RejectPrinter(5)
    try:
        return read_records([os.path.join(folder, "accounting")], rejects)
    finally:
        rejects.close()


def model_outcomes(folder, accounting):
    return replay_outcomes(accounting, site_model(os.path.join(folder, "site"), accounting))[0]


def _percent(value):
    return "-" if value is None else "{:+.1f} %".format(100.0 * value)


def row(label, outcomes):
    return "{:<34} {:>4} {:>9} {:>8.1f} {:>7.1f} {:>7.1f} {:>9} {:>7.1f} {:>7.1f} {:>9}".format(
        label, outcomes.jobs, outcomes.starts_within_2s, outcomes.mean_abs_start_error_s,
        outcomes.wait_mean_real_s, outcomes.wait_mean_sim_s,
        _percent(relative_difference(outcomes.wait_mean_sim_s, outcomes.wait_mean_real_s)),
        outcomes.wait_median_real_s, outcomes.wait_median_sim_s,
        _percent(relative_difference(outcomes.wait_median_sim_s, outcomes.wait_median_real_s)))


HEADER = "{:<34} {:>4} {:>9} {:>8} {:>7} {:>7} {:>9} {:>7} {:>7} {:>9}".format(
    "compared (other against reference)", "jobs", "within 2s", "|err| s", "mean", "other", "diff",
    "median", "other", "diff")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", metavar="FOLDER")
    args = parser.parse_args()
    if len(args.folders) % 2:
        parser.error("give the recordings in pairs: FIRST SECOND")
    for first, second in zip(args.folders[::2], args.folders[1::2]):
        one, other = read(first), read(second)
        print("\n{} and {} (waits in s; mean and median: the reference's, then the other's)".format(
            first, second))
        print(HEADER)
        print(row("second recording against first", repeat_outcomes(one, other)))
        print(row("model against first", model_outcomes(first, one)))
        print(row("model against second", model_outcomes(second, other)))


if __name__ == "__main__":
    main()
