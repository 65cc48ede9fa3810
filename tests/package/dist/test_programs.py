"""collectives/dist/programs.py: each rank's part of a Schedule, run in this process
(run_local): simulate's result exactly, messages cut into pieces alike on both sides, and
the hot path that receives straight into the buffer only where that is safe. No processes."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import collectives as cl
from collectives import dist
from collectives.algorithms import CATALOG, supports


def test_pieces_cut_a_message_into_consecutive_parts_sender_and_receiver_agree():
    # 10 elements in 3: cuts at 10*j//3 = 0, 3, 6, 10
    assert dist.programs.pieces(10, 3) == [(0, 3), (3, 6), (6, 10)]
    # 2 elements in 5: cuts 0, 0, 0, 1, 1, 2 -> the empty pieces are dropped
    assert dist.programs.pieces(2, 5) == [(0, 1), (1, 2)]
    assert dist.programs.pieces(4, 1) == [(0, 4)]


def test_the_hot_path_receives_straight_into_the_buffer_only_where_it_is_safe():
    # ring_all_reduce(4), rank 1 (program printed by hand from the schedule): steps 0-2
    # receive a chunk and add it (into an inbox), steps 3-5 overwrite one slot that the
    # step does not send (straight into the buffer); no step writes a slot it sends
    program = dist.programs.rank_program(cl.algorithms.ring_all_reduce(4), 1)
    assert [rs.direct for rs in program] == [(None,)] * 3 + [((0, 1),), ((3, 4),), ((2, 3),)]
    assert not any(rs.send_copy for rs in program)
    # all_to_all over 2 ranks: rank 0 sends its slot 1 and receives rank 1's part into the
    # same slot 1 in the same step: it must send a copy, and receive into an inbox
    a2a = cl.Schedule("all_to_all", 2, 2, [[(0, 1, 1, 0), (1, 0, 0, 1)]])
    (rs,) = dist.programs.rank_program(a2a, 0)
    assert rs.send_copy and rs.direct == (None,)
    x = np.array([[1, 2], [3, 4]])
    want = np.array([[1, 3], [2, 4]])  # rank r gets part r of every rank
    for segments in (1, 2):
        assert np.array_equal(dist.run_local(a2a, x, segments=segments), want)


@given(
    n=st.integers(2, 6),
    seed=st.integers(0, 2**31 - 1),
    name=st.sampled_from(sorted(CATALOG)),
    dtype=st.sampled_from(["float32", "int64"]),
    segments=st.integers(1, 9),
    chunk_len=st.integers(1, 5),
)
@settings(max_examples=80, deadline=None)
def test_each_rank_program_equals_simulate(n, seed, name, dtype, segments, chunk_len):
    """Each rank's program, with the runtime's hot path (a slot written once per step comes
    straight from the message, or lands directly in the buffer; sends are views; each
    message in ``segments`` pieces, applied as they land), gives simulate's result exactly
    for every catalogue algorithm."""
    assume(supports(name, n))
    schedule = CATALOG[name].build(n)
    assume(not schedule.n_switches)
    spec = cl.semantics.collective_spec(schedule.collective)
    length = spec.input_chunks(schedule.group_size, schedule.n_chunks) * chunk_len
    x = np.random.default_rng(seed).integers(-50, 50, (n, length)).astype(dtype)
    assert np.array_equal(dist.run_local(schedule, x, segments=segments), cl.simulate(schedule, x))


def test_n_segments_is_the_current_name_and_segments_still_works():
    s = cl.algorithms.ring_all_reduce(3)
    x = np.arange(3 * 6).reshape(3, 6)
    want = cl.simulate(s, x)
    for got in (
        dist.run_local(s, x, 4),
        dist.run_local(s, x, n_segments=4),
        dist.run_local(s, x, segments=4),
    ):
        assert np.array_equal(got, want)
    # the error names the keyword the caller wrote
    message = f"must be an integer from 1 to {dist.MAX_SEGMENTS} (pieces per message), got 0"
    for call, name in (
        (lambda: dist.run_local(s, x, n_segments=0), "n_segments"),
        (lambda: dist.run_local(s, x, segments=0), "segments"),
    ):
        with pytest.raises(dist.DistError) as got:
            call()
        assert str(got.value) == f"{name} {message}"
    with pytest.raises(
        dist.DistError, match="n_segments and its old name segments were both given"
    ):
        dist.run_local(s, x, n_segments=2, segments=3)
