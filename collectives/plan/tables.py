"""Tables of a plan for a reader: one row per collective, and a one-line verdict per what-if.

:func:`collectives_table` lays out a :class:`~collectives.plan.report.Plan`'s records as a
pandas DataFrame (what the capstone chapter shows for each worked plan), rounded for reading:
megabytes to one decimal, total milliseconds to whole numbers. :func:`verdict` sums up one row
of :func:`~collectives.plan.sensitivity.sensitivity` in words (step, MFU, the data-parallel
collectives hidden or exposed, the exposed tensor-parallel time). Both only format numbers
the plan computed; they leave out the records' algorithms, bottlenecks and overlap windows
(``Plan.table()`` lists those). pandas is the book's dependency, not the package's: it is
imported when a table is made.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..errors import CollectivesError
from .report import Plan

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["collectives_table", "verdict"]


def collectives_table(plan: Plan) -> pd.DataFrame:
    """One row per collective record of ``plan``, indexed by "purpose (phase)": its group
    size, the link level it runs on, megabytes each, count, and total milliseconds."""
    if not isinstance(plan, Plan):
        raise CollectivesError(f"plan must be a collectives.plan.Plan, got {plan!r}")
    import pandas as pd  # the book's dependency, not the package's: imported only here

    return pd.DataFrame(
        [
            {
                "collective": f"{r.purpose} ({r.phase})",
                "group": r.group_size,
                "where": r.level,
                "MB each": round(r.nbytes / 1e6, 1),
                "count": r.count,
                "total (ms)": round(1e3 * r.total_seconds),
            }
            for r in plan.collectives
        ]
    ).set_index("collective")


def verdict(row: Mapping) -> str:
    """A sensitivity row in words: "3.43 s (MFU 53%); DP/FSDP hidden; TP 1.00 s", or "n/a"
    where the what-if has no step (a rate nobody published)."""
    try:
        if row["step"] is None:
            return "n/a"
        data = "hidden" if row["DP/FSDP hidden"] else f"{row['exposed DP/FSDP']:.2f} s exposed"
        return (
            f"{row['step']:.2f} s (MFU {row['MFU']:.0%}); DP/FSDP {data}; "
            f"TP {row['exposed TP']:.2f} s"
        )
    except (KeyError, TypeError) as error:
        raise CollectivesError(
            f"row must be a row of collectives.plan.sensitivity, got {row!r}"
        ) from error
