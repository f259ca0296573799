"""predictor/'s floors: imports run one way, command line -> features -> database -> kit or hooks -> core.

The hook side (``predictor.server`` and everything it imports) stays on the lowest floors, pure Python: no
psycopg2, numpy or other C extension anywhere in its imports, and nothing of the admin side. The checks are
in tests/layout.py; here a planted back-import shows they fail when they should.
"""

import os

import pytest
from layout import Layout, closure, folder_cycles, import_graph, imported_names, module_files

import predictor

PREDICTOR_DIR = os.path.dirname(os.path.abspath(predictor.__file__))

LAYOUT = Layout((
    ("cli", 5, ("predictor.admin", "predictor.__main__")),
    ("predictor.ingest", 4, ("predictor.ingest",)),
    ("predictor.report", 4, ("predictor.report",)),
    ("predictor.db", 3, ("predictor.db",)),
    ("predictor.cmdline", 2, ("predictor.cmdline",)),
    ("predictor.server", 2, ("predictor.server",)),
    ("predictor.accounting", 1, ("predictor.accounting",)),
))
"""The admin command line (cli, doctor, qmgr) on top; loading accounting logs and the production report
below it, apart; the admin commands' psycopg2 sessions, schema and pruning; then, apart, the command-line kit
both CLIs share and what pbs_server loads; the accounting-log format; the pure core at the bottom."""

CORE = ["predictor", "predictor.algorithms", "predictor.durations", "predictor.errors", "predictor.history",
        "predictor.jobs", "predictor.queries"]
"""The pure core: predictors, records, errors, durations, the history store, the SQL both sides run."""

HOOK_SIDE_PARTS = {"predictor.server", "predictor.accounting", "core"}
C_EXTENSIONS = ("psycopg2", "numpy", "pandas", "matplotlib", "tqdm")
"""Packages the hook side must never import: C extensions, or what pulls them in."""


@pytest.fixture(scope="module")
def modules():
    return module_files(PREDICTOR_DIR, "predictor")


@pytest.fixture(scope="module")
def graph(modules):
    """The import graph of the predictor package as it is on disk."""
    return import_graph(modules)


def hook_side(graph):
    """What pbs_server loads: predictor.server's modules, the package itself, and all they import."""
    return closure(graph, ["predictor"] + [module for module in graph if module.startswith("predictor.server")])


def foreign_imports(modules, names):
    """``module -> package`` for each module of ``names`` that imports one of C_EXTENSIONS, lazily or not."""
    return sorted("{} -> {}".format(module, name) for module in names
                  for name in imported_names(module, modules[module])
                  if name.split(".")[0] in C_EXTENSIONS)


def test_no_cycle_between_folders(graph):
    """No folder of predictor imports one that imports it back, directly or around a circle."""
    assert folder_cycles(graph) == []


def test_imports_run_one_way(graph):
    """Every import stays in its part or goes down to a part of lower rank."""
    assert LAYOUT.wrong_way(graph) == []


def test_the_core_is_what_it_should_be(graph):
    """Outside the named floors there is only the pure core: a new top-level module is a decision."""
    assert sorted(module for module in graph if LAYOUT.part_of(module) == "core") == CORE


def test_hook_side_imports_nothing_of_the_admin_side(graph):
    """predictor.server and all it imports lie on the hook side's floors: server, accounting, core."""
    assert sorted({LAYOUT.part_of(module) for module in hook_side(graph)}) == sorted(HOOK_SIDE_PARTS)


def test_hook_side_imports_no_c_extension(modules, graph):
    """No module the hooks load imports psycopg2, numpy, pandas, matplotlib or tqdm, even inside a function."""
    assert foreign_imports(modules, hook_side(graph)) == []


def test_admin_side_is_seen_importing_psycopg2(modules, graph):
    """The canary of the check above: it does see psycopg2 where the admin side imports it."""
    assert "predictor.db.sessions -> psycopg2" in foreign_imports(modules, sorted(graph))


def planted(graph, tmp_path, module, source):
    """``graph`` with ``module``'s imports replaced by those of ``source`` (a module written in ``tmp_path``)."""
    path = tmp_path / "planted.py"
    path.write_text(source)
    names = imported_names(module, str(path))
    return dict(graph, **{module: sorted(name for name in names & set(graph) if name != module)})


def test_a_planted_back_import_is_flagged(graph, tmp_path):
    """A core module importing the admin command line: against the order, and a circle between folders."""
    bad = planted(graph, tmp_path, "predictor.history", "def predict():\n    from .admin import cli\n")
    assert LAYOUT.wrong_way(bad) == ["predictor.history -> predictor.admin", "predictor.history -> predictor.admin.cli"]
    assert any(cycle.startswith("predictor -> predictor.admin") for cycle in folder_cycles(bad))


def test_a_planted_admin_import_on_the_hook_side_is_flagged(graph, modules, tmp_path):
    """The hooks' store importing the admin side's psycopg2 sessions breaks the order and the boundary."""
    bad = planted(graph, tmp_path, "predictor.server.store", "from ..db.sessions import connect\n")
    assert LAYOUT.wrong_way(bad) == ["predictor.server.store -> predictor.db.sessions"]
    assert "predictor.db" in {LAYOUT.part_of(module) for module in hook_side(bad)}
    assert "predictor.db.sessions -> psycopg2" in foreign_imports(modules, hook_side(bad))


def test_a_planted_cycle_between_sibling_folders_is_flagged(graph, tmp_path):
    """Two parts of one rank importing each other: the kit importing the hook side, which imports the kit."""
    bad = planted(graph, tmp_path, "predictor.cmdline.files", "from ..server import config\n")
    bad = planted(bad, tmp_path, "predictor.server.config", "from ..cmdline import files\nfrom ..errors import X\n")
    assert "predictor.cmdline.files -> predictor.server.config" in LAYOUT.wrong_way(bad)
    assert folder_cycles(bad) == ["predictor.cmdline -> predictor.server -> predictor.cmdline"]
