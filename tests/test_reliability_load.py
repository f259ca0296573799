"""Load: concurrent prediction clients (processes, each a HookHistory) against a big table: no errors.

Runs benchmarks/load_predictions.py's code: small in the default run, and at
full size with ``-m slow``: 50 clients for 60 s against 10M completed jobs of
10,000 users. Throughput and p99 are recorded, not asserted (this machine's
speed is not a requirement); errors must be 0 and every client must have
made predictions, each of them from a history.
"""

import os
import sys
import uuid

import pytest
from conftest import ADMIN_DSN, admin_execute
from reliability import (
    figures,  # noqa: F401 (a fixture)
    sizes,
)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

from load_predictions import prepare, run_load  # noqa: E402  (benchmarks/ is not a package)

LOADS = sizes((20000, 200, 4, 1.5), (10000000, 10000, 50, 60.0))
"""(rows, users, clients, seconds)."""


@pytest.fixture
def big_table(database, request):
    """A throwaway database holding the rows; yields ``prepare``'s (reader login, DSN) for the test's size."""
    made = []

    def make(rows, users):
        name = "swt_rel_load_{}_{}".format(os.getpid(), uuid.uuid4().hex[:8])
        made.append(name)
        reader, dsn = prepare(ADMIN_DSN, name, rows, users)
        made.append(reader)
        return dsn

    yield make
    if made:
        admin_execute("DROP DATABASE IF EXISTS {} WITH (FORCE)".format(made[0]))
    if len(made) > 1:
        admin_execute("DROP ROLE IF EXISTS {}".format(made[1]))


@pytest.mark.parametrize("rows, users, clients, seconds", LOADS)
def test_concurrent_prediction_clients(big_table, figures, rows, users, clients, seconds):
    """Every client predicts for the whole run without a single error; throughput and p99 recorded."""
    measured = run_load(big_table(rows, users), users, clients, seconds)
    figures("load: concurrent prediction clients", rows=rows, users=users, **measured)
    assert measured["errors"] == 0, measured["error_examples"]
    assert measured["fewest_by_one_client"] > 0 and measured["without_history"] == 0
