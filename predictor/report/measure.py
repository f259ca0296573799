"""Read the report's aggregates from completed_jobs: one read-only snapshot, a few rows per query.

A role in softwalltime_reader is enough. The queries run in one REPEATABLE
READ transaction, so the figures agree with each other while the ingester or
the jobobit hook keeps adding rows.
"""

from typing import Dict, NamedTuple, Tuple

import psycopg2
import psycopg2.extensions

from ..cmdline.tables import RUNTIME_CLASSES
from ..db import sessions
from ..db.sessions import describe_error
from ..errors import DatabaseError
from . import queries

__all__ = ["Measured", "Distributions", "measure", "distributions", "connect", "V_CURVE_POINTS"]

V_CURVE_POINTS = 1001
"""Quantiles drawn per V curve: every 0.1 % of the jobs (all jobs when fewer)."""

ALL = "all"
"""The runtime class of a row over every class."""


class Measured(NamedTuple):
    """What ``measure`` read. Runtime classes are named (``ALL`` for every job), estimates as in ESTIMATES.

    * ``job_counts``: ``(class, jobs, with soft walltime, of those without walltime)``, ALL first;
    * ``accuracy``: ``(class, estimate, jobs, under, over, sum |error| s, median |error| s,
      mean runtime/estimate, median runtime/estimate)``, ALL first, soft walltime before walltime;
    * ``user_errors``: ``(user, jobs, sum |soft walltime error| s, sum |walltime error| s)`` by user name.
    """

    job_counts: Tuple[tuple, ...]
    accuracy: Tuple[tuple, ...]
    user_errors: Tuple[tuple, ...]


class Distributions(NamedTuple):
    """For the figures: ``sorted_errors[estimate]`` (seconds, ascending) and ``boxes[class][estimate]`` statistics."""

    sorted_errors: Dict[str, list]
    boxes: Dict[str, Dict[str, dict]]


CONNECT_TIMEOUT_S = 10.0
QUERY_TIMEOUT_S = 3600
"""An unreachable server is reported within seconds; one query on a large table may take minutes."""


def connect(dsn):
    """A read-only REPEATABLE READ session; DatabaseError if the server cannot be reached."""
    conn = sessions.connect(dsn, QUERY_TIMEOUT_S, read_only=True, connect_timeout_s=CONNECT_TIMEOUT_S)
    try:
        conn.set_session(isolation_level=psycopg2.extensions.ISOLATION_LEVEL_REPEATABLE_READ, readonly=True)
    except psycopg2.Error as err:
        conn.close()
        raise DatabaseError(describe_error(err)) from err
    return conn


def _params(selection, **extra):
    params = dict(selection._asdict(), **queries.class_bounds())
    params.update(extra)
    return params


def _rows(conn, query, params):
    try:
        with conn.cursor() as cursor:
            cursor.execute(query, params)
            return cursor.fetchall()
    except psycopg2.Error as err:
        raise DatabaseError(describe_error(err)) from err


def _class_name(index):
    return ALL if index is None else RUNTIME_CLASSES[index][0]


def _class_order(index):
    return -1 if index is None else index


def measure(conn, selection):
    """The tables' aggregates for ``selection`` (a ``Selection``)."""
    params = _params(selection)
    counts = sorted(_rows(conn, queries.JOB_COUNTS, params), key=lambda row: _class_order(row[0]))
    accuracy = sorted(_rows(conn, queries.ACCURACY, params), key=lambda row: (_class_order(row[1]), row[0]))
    users = sorted(_rows(conn, queries.USER_ERRORS, params))
    return Measured(
        tuple((_class_name(row[0]),) + tuple(row[1:]) for row in counts),
        tuple((_class_name(row[1]), queries.ESTIMATES[row[0]]) + tuple(row[2:]) for row in accuracy),
        tuple(tuple(row) for row in users))


def _fractions(jobs, points):
    count = min(jobs, points)
    return [index / (count - 1) for index in range(count)] if count > 1 else [0.0] * count


_EMPTY_BOX = {"jobs": 0, "q1": float("nan"), "med": float("nan"), "q3": float("nan"),
              "whislo": float("nan"), "whishi": float("nan"), "fliers": []}


def distributions(conn, selection, jobs_per_estimate, points=V_CURVE_POINTS):
    """Sorted-error quantiles per estimate and box statistics (``predictor.cmdline.figures``) per class and estimate.

    ``jobs_per_estimate`` (from ``measure``) sizes the quantiles: with fewer
    jobs than ``points``, every error comes back once.
    """
    from ..cmdline.figures import WHISKER_IQR
    fractions = {"fractions_{}".format(kind): _fractions(jobs_per_estimate.get(name, 0), points)
                 for kind, name in enumerate(queries.ESTIMATES)}
    sorted_errors = {name: [] for name in queries.ESTIMATES}
    for kind, errors in _rows(conn, queries.SORTED_ERRORS, _params(selection, **fractions)):
        sorted_errors[queries.ESTIMATES[kind]] = list(errors or [])
    boxes = {name: {estimate: dict(_EMPTY_BOX) for estimate in queries.ESTIMATES} for name, _, _ in RUNTIME_CLASSES}
    for kind, runtime_class, jobs, q1, median, q3, low, high in _rows(
            conn, queries.BOX_STATS, _params(selection, whisker_iqr=WHISKER_IQR)):
        boxes[_class_name(runtime_class)][queries.ESTIMATES[kind]] = {
            "jobs": jobs, "q1": q1, "med": median, "q3": q3, "fliers": [],
            # As matplotlib: a whisker never ends inside the box.
            "whislo": q1 if low is None else min(float(low), q1),
            "whishi": q3 if high is None else max(float(high), q3)}
    return Distributions(sorted_errors, boxes)
