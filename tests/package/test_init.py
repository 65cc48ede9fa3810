"""collectives/__init__.py: the flat re-export, and an __all__ that names all of it."""

import ast
import pathlib

import collectives as cl


def _imported_names():
    """Every name collectives/__init__.py imports, read from its source (not from __all__)."""
    tree = ast.parse(pathlib.Path(cl.__file__).read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names.update(a.asname or a.name for a in node.names)
    return names


def test_all_lists_every_imported_name_and_nothing_else():
    assert set(cl.__all__) == _imported_names()
    assert len(set(cl.__all__)) == len(cl.__all__)
    for name in cl.__all__:
        assert getattr(cl, name) is not None, name


def test_the_names_the_readme_and_issue_24_call_are_exported():
    # the README calls cl.time_concurrent and cl.Job; the others were missing from __all__
    for name in (
        "Traffic",
        "time_concurrent",
        "Job",
        "ConcurrentTiming",
        "grouped",
        "measures",
        "DistError",
        "LayoutError",
    ):
        assert name in cl.__all__, name


def test_star_import_gives_the_flat_api():
    namespace = {}
    exec("from collectives import *", namespace)
    assert namespace["time_concurrent"] is cl.cost.time_concurrent
    assert namespace["Traffic"] is cl.traffic.Traffic
    assert namespace["grouped"] is cl.transforms.grouped
    assert namespace["measures"] is cl.measures
    assert namespace["Schedule"] is cl.schedule.Schedule
