import pathlib
import sys

import pytest

# tests import their shared first-principles helpers (ground_truth.py) by module name
sys.path.insert(0, str(pathlib.Path(__file__).parent))

from work_units import start_rank, unit_of


def pytest_addoption(parser):
    parser.addoption(
        "--without-unit-tests",
        action="store_true",
        help="leave out the package's unit tests (tests/package, not marked slow): `make test` "
        "runs them in a pytest run of their own, beside the book build",
    )


def _is_unit_test(item):
    """A test of the package's unit tests (what `make check` runs): under tests/package/ and not
    marked ``slow``."""
    return item.nodeid.startswith("tests/package/") and not item.get_closest_marker("slow")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """The units of work (tests/work_units.py) of START_FIRST first, then those with the most
    ``slow`` tests, so that the long ones start at once and do not end a ``make test`` run on
    one worker alone; the tests of a unit stay together, in the order collected. With
    ``--without-unit-tests``, the package's unit tests are left out (deselected)."""
    if config.getoption("without_unit_tests"):
        left_out = [item for item in items if _is_unit_test(item)]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            items[:] = [item for item in items if not _is_unit_test(item)]
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
