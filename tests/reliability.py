"""Shared by the reliability scenarios (tests/test_reliability_*.py): sizes and figures.

Every scenario runs in two sizes from the same code: a reduced one in the
default test run, so it cannot rot, and the full one behind the ``slow``
marker (``pytest -m slow``). The figures a scenario measures go to the test's
``record_property`` (see them with ``--junitxml``) and, when
``$SWT_FIGURES`` names a file, as one JSON object per line to that file;
docs/reliability.md is written from them.
"""

import json
import os
import re
import subprocess
import sys

import pytest

FIGURES_ENV = "SWT_FIGURES"


def sizes(reduced, full):
    """Parameters for the reduced form (default run) and the full form (marked slow) of a scenario.

    A tuple is several parameters of one form.
    """
    def values(form):
        return form if isinstance(form, tuple) else (form,)

    return [pytest.param(*values(reduced), id="reduced"),
            pytest.param(*values(full), id="full", marks=pytest.mark.slow)]


@pytest.fixture
def figures(request, record_property):
    """``figures(scenario, **values)``: record what a scenario measured."""

    def record(scenario, **values):
        for name, value in values.items():
            record_property(name, value)
        path = os.environ.get(FIGURES_ENV)
        if path:
            entry = dict(scenario=scenario, test=request.node.nodeid, **values)
            with open(path, "a", encoding="utf-8") as out:
                out.write(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n")

    return record


def percentile(samples, fraction):
    """The ``fraction`` quantile of ``samples`` (nearest rank, no interpolation)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def predictor_cli(*args, timeout=600):
    """``python -m predictor ARGS`` as an admin runs it: the CompletedProcess, text output."""
    return subprocess.run([sys.executable, "-m", "predictor"] + [str(arg) for arg in args], capture_output=True,
                          text=True, timeout=timeout)


_REJECTION = re.compile(r"^(/[^:\n]*):([0-9]+): (.*)$", re.MULTILINE)


def rejections(stderr):
    """``{(path, line_no): message}`` of the ``path:line: reason`` lines the ingester printed."""
    found = {}
    for path, line_no, message in _REJECTION.findall(stderr):
        key = (path, int(line_no))
        assert key not in found, "reported twice: {}:{}".format(*key)
        found[key] = message
    return found
