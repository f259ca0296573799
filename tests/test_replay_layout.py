"""The replay's layout: imports run one way, CLI -> sweep -> features -> traces -> shared modules.

Every ``import`` and ``from ... import`` of every module under replay/ counts,
at module level or inside a function, and so does a string that names a replay
module (``importlib.import_module("replay.simulation.simulate")``): a lazy
import still ties two modules together.
"""

import ast
import os

import pytest

import predictor
import replay

REPLAY_DIR = os.path.dirname(os.path.abspath(replay.__file__))
PREDICTOR_DIR = os.path.dirname(os.path.abspath(predictor.__file__))

CLI = ("replay.cli", "replay.__main__")
"""The command line: the only modules that may import a feature."""

FEATURES = ("replay.accuracy", "replay.simulation")
"""Subpackages that use the traces; neither imports the other."""

SWEEP = "replay.sweep"
"""Many simulations: built on the simulation, which never imports it."""

TRACES = "replay.traces"
"""The trace model, the format readers and the converter."""

RANKS = {"cli": 4, SWEEP: 3, "replay.accuracy": 2, "replay.simulation": 2, TRACES: 1, "shared": 0}
"""A module may import its own part or a part of lower rank. Shared: replay's other top-level modules."""


def module_files(root, package):
    """``{dotted module name: path}`` of every .py file under ``root`` (the package ``package``)."""
    modules = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(name for name in dirs if not name.startswith((".", "__pycache__")))
        parts = [package] + os.path.relpath(folder, root).split(os.sep)
        parts = [part for part in parts if part != "."]
        for name in sorted(files):
            if name.endswith(".py"):
                stem = name[:-3]
                modules[".".join(parts if stem == "__init__" else parts + [stem])] = os.path.join(folder, name)
    return modules


def _base(module, path, level):
    """The package a relative import of ``level`` starts from."""
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    return package


def imported_names(module, path):
    """Every module name ``module`` imports (candidates: a name may be an attribute, not a module)."""
    with open(path, encoding="utf-8") as stream:
        tree = ast.parse(stream.read(), path)
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, path, node.level) if node.level else ""
            source = ".".join(part for part in (base, node.module) if part)
            names.add(source)
            names.update(source + "." + alias.name for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names.add(node.value)
    return names


def import_graph(modules):
    """``{module: sorted modules of ``modules`` it imports}``."""
    return {module: sorted(name for name in imported_names(module, path) & set(modules) if name != module)
            for module, path in modules.items()}


def part_of(module):
    """The part of replay a module belongs to (a key of ``RANKS``)."""
    if module in CLI:
        return "cli"
    for package in (SWEEP,) + FEATURES + (TRACES,):
        if module == package or module.startswith(package + "."):
            return package
    return "shared"


def wrong_way(graph):
    """``importer -> imported`` edges that leave the importer's part for another of the same or higher rank."""
    return ["{} -> {}".format(importer, imported) for importer, targets in sorted(graph.items())
            for imported in targets if part_of(importer) != part_of(imported)
            and RANKS[part_of(importer)] <= RANKS[part_of(imported)]]


def cycles(graph):
    """Import cycles as ``a -> b -> a``; a module already on a reported cycle starts no other."""
    found, on_cycle = [], set()
    modules = sorted(graph)
    for index, start in enumerate(modules):
        earlier = set(modules[:index])
        path = None if start in on_cycle else _path_back(graph, start, [start], earlier | {start})
        if path:
            found.append(" -> ".join(path))
            on_cycle.update(path)
    return found


def _path_back(graph, start, path, seen):
    """A path from ``path[-1]`` on to ``start`` through modules not ``seen``, or None; marks what it visits."""
    for following in graph[path[-1]]:
        if following == start:
            return path + [start]
        if following not in seen:
            seen.add(following)
            found = _path_back(graph, start, path + [following], seen)
            if found:
                return found
    return None


@pytest.fixture(scope="module")
def graph():
    """The import graph of the replay package as it is on disk."""
    return import_graph(module_files(REPLAY_DIR, "replay"))


def test_graph_sees_lazy_imports(tmp_path):
    """A relative import inside a function and a module named in an import_module string both count."""
    source = tmp_path / "simulate.py"
    source.write_text("def run(args):\n    from ..traces import readers\n"
                      "    return importlib.import_module('replay.accuracy.plots')\n")
    names = imported_names("replay.simulation.simulate", str(source))
    assert {"replay.traces.readers", "replay.accuracy.plots"} <= names


def test_no_import_cycle(graph):
    """No replay module imports one that imports it back, directly or around a circle."""
    assert cycles(graph) == []


def test_imports_run_one_way(graph):
    """CLI -> sweep -> accuracy or simulation -> traces -> shared modules; accuracy and simulation stay apart."""
    assert wrong_way(graph) == []


def test_predictor_does_not_import_replay():
    """The predictors and the hooks' package never reach into the replay."""
    modules = module_files(PREDICTOR_DIR, "predictor")
    reaching = sorted("{} -> {}".format(module, name) for module, path in modules.items()
                      for name in imported_names(module, path) if name == "replay" or name.startswith("replay."))
    assert reaching == []


def test_every_module_has_a_part(graph):
    """The shared part holds only the small modules both features use; a new top-level module is a decision."""
    shared = sorted(module for module in graph if part_of(module) == "shared")
    assert shared == ["replay", "replay.classification", "replay.classification.classifier",
                      "replay.classification.features", "replay.classification.forest",
                      "replay.classification.quality", "replay.classification.table", "replay.errors",
                      "replay.options", "replay.outputs", "replay.predictors", "replay.progress", "replay.report"]
