import pathlib
import sys

import pytest

# tests import their shared first-principles helpers (ground_truth.py) by module name
sys.path.insert(0, str(pathlib.Path(__file__).parent))

from work_units import start_rank, unit_of


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """The units of work (tests/work_units.py) of START_FIRST first, then those with the most
    ``slow`` tests, so that the long ones start at once and do not end a ``make test`` run on
    one worker alone; the tests of a unit stay together, in the order collected."""
    units = {}
    for item in items:
        units.setdefault(unit_of(item.nodeid), []).append(item)
    slow = {
        name: sum(1 for i in members if i.get_closest_marker("slow"))
        for name, members in units.items()
    }
    # stable: ties keep their order
    order = sorted(units, key=lambda name: (start_rank(name), -slow[name]))
    items[:] = [item for name in order for item in units[name]]


def pytest_xdist_make_scheduler(config, log):
    """Under ``--dist loadgroup``: whole units of work to each worker, in collection order."""
    if config.getoption("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return unit_of(nodeid)

    config.option.loadscopereorder = False  # the order is the one set above
    return UnitScheduling(config, log)
