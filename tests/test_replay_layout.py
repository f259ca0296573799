"""The replay's layout: imports run one way, CLI -> sweep -> features -> readers -> the PBS model -> shared.

The checks themselves are in tests/layout.py, shared with tests/test_predictor_layout.py.
"""

import os

import pytest
from layout import Layout, folder_cycles, import_graph, imported_names, module_files

import predictor
import replay

REPLAY_DIR = os.path.dirname(os.path.abspath(replay.__file__))
PREDICTOR_DIR = os.path.dirname(os.path.abspath(predictor.__file__))

LAYOUT = Layout((
    ("cli", 6, ("replay.cli", "replay.__main__")),
    ("replay.sweep", 5, ("replay.sweep",)),
    ("replay.accuracy", 4, ("replay.accuracy",)),
    ("replay.simulation", 4, ("replay.simulation",)),
    ("replay.fidelity", 4, ("replay.fidelity",)),
    ("replay.traces", 3, ("replay.traces",)),
    ("replay.classification", 3, ("replay.classification",)),
    ("replay.site", 3, ("replay.site",)),
    ("replay.pbs", 2, ("replay.pbs",)),
    ("replay.shared", 1, ("replay.shared",)),
))
"""The command line dispatches to the commands; many simulations (sweep) are built on the simulation; the
accuracy replay, the simulation and the fidelity check read traces and never import each other; the trace
readers, the job classifier and the site reader stand apart; the PBS scheduler model (replay.pbs) is pure and
uses only replay.shared (errors, options, the predictors' registry)."""


@pytest.fixture(scope="module")
def graph():
    """The import graph of the replay package as it is on disk."""
    return import_graph(module_files(REPLAY_DIR, "replay"))


def test_graph_sees_lazy_imports(tmp_path):
    """A relative import inside a function and a module named in an import_module string both count."""
    source = tmp_path / "runs.py"
    source.write_text("def run(args):\n    from ..traces import readers\n"
                      "    return importlib.import_module('replay.accuracy.plots')\n")
    names = imported_names("replay.simulation.runs", str(source))
    assert {"replay.traces.readers", "replay.accuracy.plots"} <= names


def test_no_cycle_between_folders(graph):
    """No folder of replay imports one that imports it back, directly or around a circle."""
    assert folder_cycles(graph) == []


def test_imports_run_one_way(graph):
    """CLI -> sweep -> accuracy, simulation or fidelity -> traces, classification or site -> pbs -> shared."""
    assert LAYOUT.wrong_way(graph) == []


def test_predictor_does_not_import_replay():
    """The predictors and the hooks' package never reach into the replay."""
    modules = module_files(PREDICTOR_DIR, "predictor")
    reaching = sorted("{} -> {}".format(module, name) for module, path in modules.items()
                      for name in imported_names(module, path) if name == "replay" or name.startswith("replay."))
    assert reaching == []


def test_every_module_has_a_part(graph):
    """Outside the named parts there is only the package itself: a new top-level module is a decision."""
    assert sorted(module for module in graph if LAYOUT.part_of(module) == "core") == ["replay"]


def test_each_command_is_a_module_the_cli_dispatches_to():
    """Every command has its own module with SUMMARY, EXAMPLES, add_arguments and run; the CLI defines none."""
    from replay.cli import COMMANDS, command_module
    for name in COMMANDS:
        module = command_module(name)
        assert module.__name__.endswith(".command")
        assert module.SUMMARY and callable(module.add_arguments) and callable(module.run)
