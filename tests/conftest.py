import pathlib
import sys

import pytest

# tests import their shared first-principles helpers (ground_truth.py) by module name
sys.path.insert(0, str(pathlib.Path(__file__).parent))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """How `make test` (``-n auto --dist loadgroup --no-loadscope-reorder``) shares the tests
    between the workers: a unit of work is an ``xdist_group`` (the grading pipeline's two
    halves) or else a whole test file (as ``--dist loadfile``: a file's module fixtures are
    built once), and the units with the most ``slow`` tests start first, so that the long
    ones do not end the run on one worker alone. The order of the tests inside a unit stays
    as collected. Runs before xdist reads the groups."""
    def unit(item):
        groups = [m.args[0] if m.args else m.kwargs.get("name", "default")
                  for m in item.iter_markers("xdist_group")]
        return groups[0] if groups else item.nodeid.split("::")[0]

    units = {}
    for item in items:
        name = unit(item)
        if not any(item.iter_markers("xdist_group")):
            item.add_marker(pytest.mark.xdist_group(name))
        units.setdefault(name, []).append(item)
    slow = {name: sum(1 for i in members if i.get_closest_marker("slow"))
            for name, members in units.items()}
    order = sorted(units, key=lambda name: -slow[name])      # stable: ties keep their order
    items[:] = [item for name in order for item in units[name]]
