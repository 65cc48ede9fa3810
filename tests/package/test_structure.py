"""The package's structure, as CONTRIBUTING.md states it: checked from the source.

- no import cycle among the modules of ``collectives/`` (and of ``collectives_grader/``);
  module-level and function-level imports both count, so does
  ``importlib.import_module("collectives...")`` with a literal name; an import under
  ``if TYPE_CHECKING:`` does not (it never runs);
- no private name (``_x``) imported from another module of the packages (make it public, or
  move the code that needs it);
- ``__all__`` in every module;
- ``collectives_grader`` (the instructors' tooling) may import ``collectives``, never the
  reverse: graded code sees a copy of ``collectives/`` that must stand on its own;
- every public exception class is in the one hierarchy under ``collectives.errors.
  CollectivesError``, and the package's own are defined in ``collectives/errors.py``.

The first four read the source with :mod:`ast` (nothing is imported); the last imports the
modules. A failure lists every offender with its file and line. The analysis is tested first
on small packages written to a temporary directory, so that each check is known to fail when
it should.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("collectives", "collectives_grader")  # the second once it exists
LOWER, UPPER = "collectives", "collectives_grader"


# ---- reading the source ---------------------------------------------------------------------


@dataclass(frozen=True)
class Import:
    """One import of a module of the packages, as written in the source."""

    importer: str  # the module that imports
    target: str  # the module imported
    names: tuple  # names taken from it (``from target import a, b``), else ()
    path: Path
    line: int
    in_function: bool

    def where(self, root):
        level = "in a function" if self.in_function else "at module level"
        return f"{self.path.relative_to(root)}:{self.line} ({level})"


def find_modules(root, packages=PACKAGES):
    """{dotted module name: path} for every ``.py`` file of ``packages`` under ``root``."""
    found = {}
    for package in packages:
        base = root / package
        if not (base / "__init__.py").is_file():
            continue
        for path in sorted(base.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _is_type_checking(test):
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Imports(ast.NodeVisitor):
    """Collect a module's imports of ``known`` modules, noting function-level ones."""

    def __init__(self, module, path, known):
        self.module, self.path, self.known = module, path, known
        self.package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        self.depth = 0
        self.found = []

    def _add(self, target, names, node):
        self.found.append(
            Import(self.module, target, tuple(names), self.path, node.lineno, self.depth > 0)
        )

    def _owner(self, dotted):
        """The longest known module that ``dotted`` names or lies inside, else None."""
        parts = dotted.split(".")
        for end in range(len(parts), 0, -1):
            candidate = ".".join(parts[:end])
            if candidate in self.known:
                return candidate
        return None

    def _absolute(self, level, name):
        if level == 0:
            return name
        base = self.package.split(".")
        base = base[: len(base) - (level - 1)]
        return ".".join(base + ([name] if name else []))

    def _function(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_If(self, node):
        if _is_type_checking(node.test):  # annotations only: never runs
            for child in node.orelse:
                self.visit(child)
        else:
            self.generic_visit(node)

    def visit_Import(self, node):
        for alias in node.names:
            owner = self._owner(alias.name)
            if owner:
                self._add(owner, (), node)

    def visit_ImportFrom(self, node):
        base = self._absolute(node.level, node.module or "")
        names = []
        for alias in node.names:
            if f"{base}.{alias.name}" in self.known:  # a submodule, imported as a module
                self._add(f"{base}.{alias.name}", (), node)
            else:
                names.append(alias.name)
        owner = self._owner(base)
        if names and owner:
            self._add(owner, names if owner == base else (), node)

    def visit_Call(self, node):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if (
            name in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            text = node.args[0].value
            level = len(text) - len(text.lstrip("."))
            owner = self._owner(self._absolute(level, text.lstrip(".")))
            if owner:
                self._add(owner, (), node)
        self.generic_visit(node)


def find_imports(root, packages=PACKAGES):
    """Every import among the modules of ``packages`` under ``root``, in source order."""
    modules = find_modules(root, packages)
    found = []
    for module, path in modules.items():
        visitor = _Imports(module, path, modules)
        visitor.visit(ast.parse(path.read_text(), filename=str(path)))
        found.extend(visitor.found)
    return found


# ---- the four rules, as lists of offences (empty when the rule holds) -----------------------


def import_cycles(imports, shown=6):
    """One entry per strongly connected group of the import graph (the modules that import
    each other, directly or not): the sorted group and its loops, shortest first (at most
    ``shown``), each loop as the imports that close it."""
    graph = nx.DiGraph()
    first = {}
    for imp in imports:
        if imp.importer != imp.target:
            graph.add_edge(imp.importer, imp.target)
            first.setdefault((imp.importer, imp.target), imp)
    cycles = []
    for group in nx.strongly_connected_components(graph):
        if len(group) < 2:
            continue
        loops = sorted(nx.simple_cycles(graph.subgraph(group)), key=lambda c: (len(c), c))
        steps = [[first[a, b] for a, b in zip(loop, loop[1:] + loop[:1])] for loop in loops[:shown]]
        cycles.append((sorted(group), steps, len(loops)))
    return sorted(cycles, key=lambda c: c[0])


def private_imports(imports):
    """(import, name) for each private name taken from another module."""
    return [
        (imp, name)
        for imp in imports
        for name in imp.names
        if name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
    ]


def modules_without_all(root, packages=PACKAGES):
    """Modules that never assign ``__all__`` at module level (nor import it, as a compatibility
    module does: ``from new.home import __all__``)."""
    missing = []
    for path in find_modules(root, packages).values():
        tree = ast.parse(path.read_text(), filename=str(path))
        names = []
        for node in tree.body:
            if isinstance(node, ast.Assign):
                names += [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                names += [node.target.id] if isinstance(node.target, ast.Name) else []
            elif isinstance(node, ast.ImportFrom):
                names += [alias.asname or alias.name for alias in node.names]
        if "__all__" not in names:
            missing.append(path)
    return missing


#: the compatibility modules that keep the old paths of the instructor's tools working
#: (``python -m collectives.grading.sandbox``): each only re-exports its collectives_grader
#: module, and nothing in collectives imports them (tests/course/test_collectives_grader.py)
UPWARD_SHIMS = {
    "collectives.grading.sandbox",
    "collectives.grading.classroom",
    "collectives.grading.precheck",
}


def upward_imports(imports, lower=LOWER, upper=UPPER, shims=frozenset()):
    """Imports of ``upper`` from a module of ``lower`` (other than the named ``shims``)."""
    return [
        imp
        for imp in imports
        if imp.importer.split(".")[0] == lower
        and imp.target.split(".")[0] == upper
        and imp.importer not in shims
    ]


def _report(title, lines):
    return f"{title}:\n" + "\n".join(f"  {line}" for line in lines)


def _cycle_lines(cycles, root):
    lines = []
    for group, loops, n_loops in cycles:
        lines.append(f"{len(group)} modules: {', '.join(group)}")
        for loop in loops:
            lines.append("  loop:")
            for imp in loop:
                names = f" ({', '.join(imp.names)})" if imp.names else ""
                lines.append(f"    {imp.importer} -> {imp.target}{names}  at {imp.where(root)}")
        if n_loops > len(loops):
            lines.append(f"  ... and {n_loops - len(loops)} longer loop(s) through this group")
    return lines


# ---- the analysis on small packages, so that each check can be seen to fail ---------------


def _write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_cycle_through_a_function_level_import_is_found(tmp_path):
    # a imports b at module level; b imports a inside a function: a cycle all the same
    root = _write(
        tmp_path,
        {
            "pkg/__init__.py": "__all__ = []\n",
            "pkg/a.py": "from .b import f\n__all__ = ['g']\ndef g():\n    return f()\n",
            "pkg/b.py": "__all__ = ['f']\ndef f():\n    from . import a\n    return a\n",
        },
    )
    cycles = import_cycles(find_imports(root, ("pkg",)))
    assert [group for group, _, _ in cycles] == [["pkg.a", "pkg.b"]]
    ((_, (steps,), n_loops),) = cycles
    assert n_loops == 1
    assert {(s.importer, s.target, s.line, s.in_function) for s in steps} == {
        ("pkg.a", "pkg.b", 1, False),
        ("pkg.b", "pkg.a", 3, True),
    }


def test_type_checking_imports_and_chains_without_a_loop_are_not_cycles(tmp_path):
    # a -> b -> c and c's only import of a is for annotations
    root = _write(
        tmp_path,
        {
            "pkg/__init__.py": "from . import a\n__all__ = ['a']\n",
            "pkg/a.py": "from . import b\n__all__ = []\n",
            "pkg/b.py": "from .c import x\n__all__ = []\n",
            "pkg/c.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                "    from .a import A\nelse:\n    import json\nx = 1\n__all__ = ['x']\n"
            ),
        },
    )
    imports = find_imports(root, ("pkg",))
    assert {(i.importer, i.target) for i in imports} == {
        ("pkg", "pkg.a"),
        ("pkg.a", "pkg.b"),
        ("pkg.b", "pkg.c"),
    }
    assert import_cycles(imports) == []


def test_the_package_init_counts_as_a_module_of_its_own(tmp_path):
    # the catalogue in __init__ imports a submodule that imports the catalogue back
    root = _write(
        tmp_path,
        {
            "pkg/__init__.py": "__all__ = []\n",
            "pkg/algos/__init__.py": "from .choose import best\nCATALOG = {}\n__all__ = ['best']\n",
            "pkg/algos/choose.py": (
                "__all__ = ['best']\ndef best():\n    from . import CATALOG\n    return CATALOG\n"
            ),
            "pkg/other.py": (
                "import importlib\n__all__ = []\nm = importlib.import_module('pkg.algos')\n"
            ),
        },
    )
    imports = find_imports(root, ("pkg",))
    assert ("pkg.other", "pkg.algos") in {(i.importer, i.target) for i in imports}
    assert [group for group, _, _ in import_cycles(imports)] == [["pkg.algos", "pkg.algos.choose"]]


def test_private_names_are_found_and_private_submodules_and_dunders_are_not(tmp_path):
    root = _write(
        tmp_path,
        {
            "pkg/__init__.py": "__version__ = '1'\n__all__ = []\n",
            "pkg/_hash.py": "__all__ = ['h']\ndef h():\n    return 0\n",
            "pkg/a.py": "_x = 1\n__all__ = []\n",
            "pkg/sub/__init__.py": "__all__ = []\n",
            "pkg/sub/b.py": (
                "from .. import _hash, __version__\nfrom ..a import _x as y\n"
                "__all__ = []\ndef f():\n    from pkg.a import _x\n    return _x\n"
            ),
        },
    )
    found = private_imports(find_imports(root, ("pkg",)))
    assert [(imp.importer, imp.target, name, imp.line) for imp, name in found] == [
        ("pkg.sub.b", "pkg.a", "_x", 2),
        ("pkg.sub.b", "pkg.a", "_x", 5),
    ]


def test_a_module_without_all_and_an_upward_import_are_found(tmp_path):
    root = _write(
        tmp_path,
        {
            "low/__init__.py": "__all__ = []\n",
            "low/a.py": "x = 1\n",  # no __all__
            # a compatibility module: its names and its __all__ from the new home
            "low/c.py": "from low.b import *\nfrom low.b import __all__\n",
            "low/b.py": "__all__: list = []\ndef f():\n    import high.tool\n",
            "high/__init__.py": "__all__ = []\n",
            "high/tool.py": "import low.b\n__all__ = []\n",  # allowed direction
        },
    )
    assert modules_without_all(root, ("low", "high")) == [root / "low/a.py"]
    imports = find_imports(root, ("low", "high"))
    assert [(i.importer, i.target) for i in upward_imports(imports, "low", "high")] == [
        ("low.b", "high.tool")
    ]


# ---- the rules on the real packages ---------------------------------------------------------


@functools.lru_cache(maxsize=None)
def imports():
    """The real packages' imports, read once (when the first test needs them)."""
    return tuple(find_imports(ROOT))


def test_the_packages_are_found():
    modules = find_modules(ROOT)
    assert {"collectives", "collectives.schedule", "collectives.errors"} <= set(modules)
    assert len(imports()) > 100  # a parse that found nothing would pass every rule


def test_no_import_cycle():
    cycles = import_cycles(imports())
    if cycles:
        pytest.fail(
            _report(
                f"{len(cycles)} group(s) of modules in import cycles (each group, then its loops: "
                "break every loop by moving the shared code down a layer)",
                _cycle_lines(cycles, ROOT),
            ),
            pytrace=False,
        )


def test_no_private_name_is_imported_from_another_module():
    found = private_imports(imports())
    if found:
        pytest.fail(
            _report(
                f"{len(found)} private name(s) imported across modules (make the name public, "
                "with a docstring and a place in __all__, or move the code that needs it)",
                [
                    f"{name} from {imp.target} into {imp.importer}  at {imp.where(ROOT)}"
                    for imp, name in found
                ],
            ),
            pytrace=False,
        )


def test_every_module_has_all():
    missing = modules_without_all(ROOT)
    if missing:
        pytest.fail(
            _report(
                f"{len(missing)} module(s) without __all__",
                [str(path.relative_to(ROOT)) for path in missing],
            ),
            pytrace=False,
        )


def test_collectives_never_imports_the_grader_package():
    found = upward_imports(imports(), shims=UPWARD_SHIMS)
    shim_users = [imp for imp in imports() if imp.target in UPWARD_SHIMS]
    assert not shim_users, [f"{imp.importer} -> {imp.target}" for imp in shim_users]
    if found:
        pytest.fail(
            _report(
                f"{len(found)} import(s) of {UPPER} from {LOWER} (the copy of {LOWER}/ that "
                f"graded code sees must stand alone: move the code into {UPPER}, or pass it in)",
                [f"{imp.importer} -> {imp.target}  at {imp.where(ROOT)}" for imp in found],
            ),
            pytrace=False,
        )


def _exception_classes():
    """(module, class) for every exception class the packages' modules define."""
    found = []
    for module in find_modules(ROOT):
        try:
            loaded = importlib.import_module(module)
        except ImportError as error:  # an optional dependency (torch) that is missing
            pytest.skip(f"cannot import {module}: {error}")
        for _, cls in inspect.getmembers(loaded, inspect.isclass):
            if cls.__module__ == module and issubclass(cls, BaseException):
                found.append((module, cls))
    return found


def test_every_error_is_in_the_one_hierarchy():
    from collectives.errors import CollectivesError

    classes = _exception_classes()
    assert any(cls is CollectivesError for _, cls in classes)
    public = [(module, cls) for module, cls in classes if not cls.__name__.startswith("_")]
    outside = [
        f"{module}.{cls.__qualname__} (bases: {', '.join(base.__name__ for base in cls.__bases__)})"
        for module, cls in public
        if not issubclass(cls, CollectivesError)
    ]
    elsewhere = [
        f"{module}.{cls.__qualname__}"
        for module, cls in public
        if module.split(".")[0] == LOWER and module != "collectives.errors"
    ]
    lines = [f"outside the CollectivesError hierarchy: {name}" for name in outside] + [
        f"defined outside collectives/errors.py: {name}" for name in elsewhere
    ]
    if lines:
        pytest.fail(
            _report(
                f"{len(lines)} exception class(es) out of place (derive every error from "
                "collectives.errors.CollectivesError and define collectives' own in "
                "collectives/errors.py; the old module may re-export them)",
                lines,
            ),
            pytrace=False,
        )
