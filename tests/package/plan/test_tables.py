"""collectives/plan/tables.py: a plan's collectives as a table, a what-if row in words."""

import pytest

import collectives as cl
from collectives.errors import CollectivesError

P = cl.plan


def _record(purpose, count, seconds, nbytes, phase="forward", level="nvlink"):
    return P.Record(
        purpose, "all_gather", "tp", 8, nbytes, count, phase, None, level, "ring", seconds
    )


def test_collectives_table_by_hand():
    memory = P.Memory(0, 0, 0, 0, 0, 0, None)
    records = (
        _record("tp activation all-gather", 160, 1.25e-3, 536_870_912),
        _record("fsdp weight all-gather", 80, 4.4e-3, 220_200_960, phase="backward", level="leaf"),
    )
    plan = P.Plan("hand-made", records, 3.0, 1.0, 2.0, 0.0, memory, 1, 8, "none")
    table = cl.plan.collectives_table(plan)
    assert list(table.index) == [
        "tp activation all-gather (forward)",
        "fsdp weight all-gather (backward)",
    ]
    assert list(table.columns) == ["group", "where", "MB each", "count", "total (ms)"]
    # 536,870,912 B = 536.9 MB; 160 x 1.25 ms = 200 ms; 220,200,960 B = 220.2 MB; 80 x 4.4 = 352
    assert table.loc["tp activation all-gather (forward)"].tolist() == [
        8,
        "nvlink",
        536.9,
        160,
        200,
    ]
    assert table.loc["fsdp weight all-gather (backward)"].tolist() == [8, "leaf", 220.2, 80, 352]


def test_collectives_table_of_a_real_plan_has_a_row_per_record():
    p = P.training_step(
        "llama3-70b", P.Layout(fsdp=8), cl.hardware.preset("dgx-h100"), seq_len=512, global_batch=8
    )
    assert len(cl.plan.collectives_table(p)) == len(p.collectives)


@pytest.mark.parametrize(
    "row, expected",
    [
        (
            {
                "step": 3.4321,
                "MFU": 0.531,
                "DP/FSDP hidden": True,
                "exposed DP/FSDP": 0.0,
                "exposed TP": 1.004,
            },
            "3.43 s (MFU 53%); DP/FSDP hidden; TP 1.00 s",
        ),
        (
            {
                "step": 4.18,
                "MFU": 0.44,
                "DP/FSDP hidden": False,
                "exposed DP/FSDP": 0.7512,
                "exposed TP": 1.0,
            },
            "4.18 s (MFU 44%); DP/FSDP 0.75 s exposed; TP 1.00 s",
        ),
        ({"step": None}, "n/a"),
    ],
)
def test_verdict(row, expected):
    assert cl.plan.verdict(row) == expected


def test_verdict_of_a_sensitivity_row():
    rows = P.sensitivity("llama3-70b", P.Layout(fsdp=8), "dgx-h100", global_batch=8, seq_len=512)
    assert all(cl.plan.verdict(r) == "n/a" or "MFU" in cl.plan.verdict(r) for r in rows)


@pytest.mark.parametrize("bad", [{}, {"step": 1.0}, None])
def test_verdict_bad_row(bad):
    with pytest.raises(CollectivesError):
        cl.plan.verdict(bad)


def test_collectives_table_bad_plan():
    with pytest.raises(CollectivesError):
        cl.plan.collectives_table("not a plan")
