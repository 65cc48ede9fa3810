"""collectives/dist/worker.py: what a worker process reports when it fails. A rank that
raises, dies, hangs or sends a message of the wrong size (a "fault" injected at a step by
the worker) is named with its job and step, and nothing is left running."""

import tempfile

import numpy as np
import pytest

import collectives as cl

from processes import children as _children
from processes import marked as _marked

pytest.importorskip("torch")
from collectives import dist
from collectives.dist.jobs import _schedule_job


@pytest.mark.slow  # starts processes
def test_a_worker_error_names_the_rank_and_nothing_is_left_behind(monkeypatch, tmp_path):
    """Skip the pre-check: the worker finds the empty read itself; rank 1, blocked waiting
    for rank 0's message, must not hang, and every process and file is cleaned up."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    bad = cl.Schedule("all_gather", 2, 2, [[(0, 1, 1, 0)]])
    x = np.arange(4).reshape(2, 2)
    with pytest.raises(cl.ScheduleError) as want:
        cl.simulate(bad, x)
    buffer, filled = cl.semantics.collective_spec("all_gather").place_inputs(
        x, np.array([[0, 1]]), 2, 2, None, 2
    )
    task = {
        "kind": "schedule",
        "schedule": bad,
        "buffer": buffer,
        "filled": filled,
        "what": "schedule 'bad'",
    }
    before = _children()
    with pytest.raises(dist.DistError) as got:
        dist.launch.run_tasks(2, [task], "gloo", 30.0)
    # the rank's own error, not the launcher's timeout (no timed assert: loaded machines vary)
    assert "timed out" not in str(got.value).lower()
    error = got.value
    assert isinstance(error, cl.CollectivesError)
    assert error.rank == 0 and error.exception == "ScheduleError" and error.task == 0
    assert str(error).startswith(
        "rank 0 of 2 failed over gloo in job 0 (schedule 'bad') at "
        "step 0 of 1: ScheduleError: " + str(want.value)
    )
    assert error.worker_message == str(want.value)
    assert "Traceback" in error.worker_traceback
    assert _children() <= before
    assert not list(tmp_path.glob("collectives-dist-*"))


FAILURES = [
    (
        "die",
        r"^rank 1 of 2 failed over gloo in job 0 \(schedule 'ring_all_reduce'\) at step "
        r"1 of 2: ProcessDied: exited with code 70 without a Python exception",
    ),
    (
        "mismatch",
        r"(?s)^rank 0 of 2 failed over gloo in job 0 \(schedule 'ring_all_reduce'\) "
        r"at step 1 of 2: ProcessDied: was killed by SIGABRT.*Received data size "
        r"doesn't match expected size",
    ),
    (
        "hang",
        r"^no progress for 2 s running 2 ranks over gloo: rank\(s\) 0, 1 had not "
        r"finished \(rank 0 in job 0 \(schedule 'ring_all_reduce'\) at step 1 of 2; "
        r"rank 1 in job 0 \(schedule 'ring_all_reduce'\) at step 1 of 2; a rank that "
        r"never returns from a step is waiting for a message no peer sends",
    ),
]


@pytest.mark.parametrize(
    "kind,expected,segments",
    [f + (1,) for f in FAILURES]  # whole messages
    + [
        pytest.param(*f, 3, marks=pytest.mark.slow)  # in pieces
        for f in FAILURES
        if f[0] != "mismatch"
    ],
)
@pytest.mark.slow  # starts processes
def test_a_rank_that_dies_mismatches_or_hangs_is_named_with_its_step(
    kind, expected, segments, monkeypatch, tmp_path, marked_env
):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    schedule = cl.algorithms.ring_all_reduce(2)
    job = _schedule_job(schedule, np.arange(8, dtype=np.float32).reshape(2, 4), segments)
    job["fault"] = {"rank": 1, "step": 1, "kind": kind}
    before = _children()
    with pytest.raises(dist.DistError, match=expected) as got:
        dist.launch.run_tasks(2, [job], "gloo", 120.0, stall=2.0)
    if kind == "hang":
        assert got.value.unfinished == (0, 1)
    else:
        assert got.value.task == 0
    assert _children() <= before
    assert not _marked(marked_env)
    assert not list(tmp_path.glob("collectives-dist-*"))


@pytest.mark.slow
def test_a_segmented_message_of_the_wrong_size_ends_the_run_naming_the_rank_and_step(
    monkeypatch, tmp_path, marked_env
):
    """Rank 1 sends a message one row too long at step 1, in 3 pieces. A row holds 2
    elements (4 elements over 2 chunks): rank 0 expects 2 elements, cut at 2*j//3 = 0, 0,
    1, 2 into pieces of 1 and 1; rank 1 sends 4, cut at 0, 1, 2, 4 into 1, 1 and 2. The
    first two match, so nothing aborts: rank 0 finishes, rank 1 waits forever to send its
    third piece, and the run ends there, naming rank 1 at step 1."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    job = _schedule_job(
        cl.algorithms.ring_all_reduce(2), np.arange(8, dtype=np.float32).reshape(2, 4), 3
    )
    job["fault"] = {"rank": 1, "step": 1, "kind": "mismatch"}
    before = _children()
    with pytest.raises(dist.DistError) as got:
        dist.launch.run_tasks(2, [job], "gloo", 120.0, stall=2.0)
    assert str(got.value) == (
        "no progress for 2 s running 2 ranks over gloo: rank(s) 0, 1 had not finished (rank "
        "0 in the final barrier, waiting for the others; rank 1 in job 0 (schedule "
        "'ring_all_reduce') at step 1 of 2; a rank that never returns from a step is "
        "waiting for a message no peer sends, or sending one no peer receives)"
    )
    assert got.value.unfinished == (0, 1)
    assert _children() <= before
    assert not _marked(marked_env)
