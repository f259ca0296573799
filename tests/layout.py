"""The import graph of a package, and the checks a layout test makes of it.

Every ``import`` and ``from ... import`` of every module counts, at module
level or inside a function, and so does a string that names a module
(``importlib.import_module("replay.simulation.runs")``): a lazy import still
ties two modules together.

A ``Layout`` names the parts of a package (its subpackages, the command line,
the pure core) and ranks them: a module may import its own part or a part of
lower rank, never one of the same or higher rank. Two checks follow: no
``importer -> imported`` edge runs against the ranks (``wrong_way``), and no
circle runs through the package's folders (``folder_cycles``): a folder is its
modules taken together, so two folders that import each other are one knot
even when no single module does.
"""

import ast
import os
from typing import NamedTuple, Tuple

__all__ = ["Layout", "module_files", "imported_names", "import_graph", "cycles", "folder_of", "folder_graph",
           "folder_cycles", "closure"]


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


def cycles(graph):
    """Import cycles as ``a -> b -> a``; a node already on a reported cycle starts no other."""
    found, on_cycle = [], set()
    nodes = sorted(graph)
    for index, start in enumerate(nodes):
        earlier = set(nodes[:index])
        path = None if start in on_cycle else _path_back(graph, start, [start], earlier | {start})
        if path:
            found.append(" -> ".join(path))
            on_cycle.update(path)
    return found


def _path_back(graph, start, path, seen):
    """A path from ``path[-1]`` on to ``start`` through nodes not ``seen``, or None; marks what it visits."""
    for following in graph.get(path[-1], ()):
        if following == start:
            return path + [start]
        if following not in seen:
            seen.add(following)
            found = _path_back(graph, start, path + [following], seen)
            if found:
                return found
    return None


def folder_of(module, graph):
    """The folder (package) ``module`` lives in; ``__main__``, the script ``python -m`` runs and nothing imports,
    stands apart as an entry point."""
    if module.endswith(".__main__"):
        return module
    is_package = any(other.startswith(module + ".") for other in graph)
    return module if is_package else module.rpartition(".")[0]


def folder_graph(graph):
    """``{folder: sorted folders its modules import}``, a folder's imports of itself left out."""
    folders = {}
    for importer, targets in graph.items():
        source = folder_of(importer, graph)
        folders.setdefault(source, set()).update(folder_of(target, graph) for target in targets)
    return {folder: sorted(targets - {folder}) for folder, targets in folders.items()}


def folder_cycles(graph):
    """Circles between folders, as ``a -> b -> a``."""
    return cycles(folder_graph(graph))


def closure(graph, starts):
    """Every module reachable from ``starts`` (included) through ``graph``, sorted."""
    seen, pending = set(), list(starts)
    while pending:
        module = pending.pop()
        if module not in seen:
            seen.add(module)
            pending.extend(graph.get(module, ()))
    return sorted(seen)


class Layout(NamedTuple):
    """The parts of a package: ``(name, rank, modules or packages)``; a module in none of them is ``core``."""

    parts: Tuple[Tuple[str, int, Tuple[str, ...]], ...]
    core_rank: int = 0

    def part_of(self, module):
        """The name of the part ``module`` belongs to."""
        for name, _, members in self.parts:
            if any(module == member or module.startswith(member + ".") for member in members):
                return name
        return "core"

    def rank(self, part):
        return next((rank for name, rank, _ in self.parts if name == part), self.core_rank)

    def wrong_way(self, graph):
        """``importer -> imported`` edges that leave the importer's part for one of the same or higher rank."""
        return ["{} -> {}".format(importer, imported) for importer, targets in sorted(graph.items())
                for imported in targets if self.part_of(importer) != self.part_of(imported)
                and self.rank(self.part_of(importer)) <= self.rank(self.part_of(imported))]
