"""collectives/semantics.py: a Collective's layout methods need the root (rooted collectives)
and the peers (permute) they are given; a missing one is a ScheduleError, never a numpy error
or a silently wrong layout."""

import numpy as np
import pytest

import collectives as cl
from collectives.semantics import collective_spec

ONE_GROUP_OF_3 = np.arange(3)[None, :]  # ranks 0, 1, 2 in one group


def test_broadcast_inputs_start_on_the_root_only():
    # 3 ranks, 2 chunks of 1 element, root 1: only rank 1's buffer holds data at the start
    buffer, filled = collective_spec("broadcast").place_inputs(
        np.arange(6).reshape(3, 2), ONE_GROUP_OF_3, 2, 2, 1, 3
    )
    assert filled.tolist() == [[False, False], [True, True], [False, False]]
    assert buffer[1, :, 0].tolist() == [2, 3]  # rank 1's row [2, 3]


@pytest.mark.parametrize("name", ["broadcast", "scatter"])
def test_placing_inputs_without_a_root_is_an_error(name):
    # it used to index groups[:, None], which fills every rank's buffer as if all were roots
    with pytest.raises(cl.ScheduleError, match=f"^{name} needs a root"):
        collective_spec(name).place_inputs(
            np.arange(9).reshape(3, 3), ONE_GROUP_OF_3, 3, 3, None, 3
        )


@pytest.mark.parametrize("name", ["broadcast", "scatter"])
def test_the_symbolic_precondition_needs_a_root(name):
    # only the root starts with data (reduce and gather start with data on every rank)
    with pytest.raises(cl.ScheduleError, match=f"^{name} needs a root"):
        collective_spec(name).initial(ONE_GROUP_OF_3, 3, 3, None, 3)


@pytest.mark.parametrize("name", ["broadcast", "scatter", "reduce", "gather"])
def test_the_symbolic_postcondition_needs_a_root(name):
    # it used to fail inside numpy (an object array as an index, int(None))
    with pytest.raises(cl.ScheduleError, match=f"^{name} needs a root"):
        collective_spec(name).expected(ONE_GROUP_OF_3, 3, None)


def test_a_root_outside_the_group_is_an_error():
    with pytest.raises(cl.ScheduleError, match=r"^root must be an integer <= 2, got 3$"):
        collective_spec("reduce").expected(ONE_GROUP_OF_3, 3, 3)


def test_the_permute_postcondition_needs_the_peers():
    with pytest.raises(cl.ScheduleError, match=r"^permute needs peers\[p\]"):
        collective_spec("permute").expected(ONE_GROUP_OF_3, 1, None)
    # peers [1, 2, -1]: rank 1 ends with rank 0's one chunk, rank 2 with rank 1's
    ranks, slots, labels, owners = collective_spec("permute").expected(
        ONE_GROUP_OF_3, 1, None, peers=np.array([1, 2, -1])
    )
    assert (ranks.tolist(), slots.tolist(), labels.tolist(), owners.tolist()) == (
        [1, 2],
        [0, 0],
        [0, 0],
        [0, 1],
    )
