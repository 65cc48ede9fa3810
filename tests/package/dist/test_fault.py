"""dist.run(fault=...): a failure injected into one rank at one step ends the run with a
DistError naming that rank, and ``reached`` says where every rank was."""

import numpy as np
import pytest

import collectives as cl
from collectives import dist
from collectives.dist.jobs import check_fault


@pytest.mark.slow  # starts processes
def test_a_rank_that_dies_is_named_and_every_rank_s_position_kept():
    ring = cl.algorithms.ring_all_reduce(4)
    x = np.arange(4 * 8).reshape(4, 8) % 7
    with pytest.raises(dist.DistError, match="rank 2 of 4 failed") as got:
        dist.run(ring, x, fault={"rank": 2, "step": 3, "kind": "die"}, timeout=240)
    err = got.value
    assert err.rank == 2 and err.reached[2] == (0, 3, "running")
    # rank 3 waits in step 3 for rank 2's message; nobody gets past step 4 without it:
    # rank 2's chunk reaches rank 3 in step 3 and rank 0 only in step 4
    assert set(err.reached) == {0, 1, 2, 3}
    assert all(job == 0 and 0 <= step <= 4 for job, step, _ in err.reached.values())
    assert err.reached[3][1] == 3


def test_check_fault():
    ring = cl.algorithms.ring_all_reduce(4)
    assert check_fault(None, ring) is None
    assert check_fault({"rank": 1, "step": 5, "kind": "hang"}, ring) == {
        "rank": 1,
        "step": 5,
        "kind": "hang",
    }
    with pytest.raises(cl.CollectivesError, match="keys 'rank', 'step' and 'kind'"):
        check_fault({"rank": 1}, ring)
    with pytest.raises(cl.CollectivesError, match=r"fault step must be one of 0\.\.5"):
        check_fault({"rank": 1, "step": 6, "kind": "die"}, ring)
    with pytest.raises(cl.CollectivesError, match=r"fault rank must be one of 0\.\.3"):
        check_fault({"rank": True, "step": 0, "kind": "die"}, ring)
    with pytest.raises(cl.CollectivesError, match="fault kind must be one of die, hang"):
        check_fault({"rank": 0, "step": 0, "kind": "explode"}, ring)


def test_positions_name_each_rank_s_phase():
    from collectives.dist.board import positions

    rows = np.array([[0, 3, 1], [-1, -1, 0], [0, 5, 2]])  # running, starting, finishing
    assert positions(rows) == {
        0: (0, 3, "running"),
        1: (-1, -1, "starting"),
        2: (0, 5, "finishing"),
    }
