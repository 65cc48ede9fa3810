"""collectives/dist/jobs.py: schedules run for real, one process per rank, over torch.distributed
(gloo).

Starting workers is slow (each imports torch), so the equality tests share one batch: a
module fixture hands every job to ``run_many``, which starts one process group per rank
count (4 launches for n = 1..4) and runs all of that count's schedules and torch
collectives in it. Every schedule's result must equal ``simulate`` exactly (same shape,
dtype and bits: the runner adds in the schedule's transfer order) and the first-principles
ground truth; torch.distributed's own collectives must give that ground truth too.

``make check`` runs that batch and one launch of each other kind (a schedule alone, a
comparison with torch, a dtype gloo refuses); the tests marked ``slow`` (groups over 6 ranks,
rooted and segmented comparisons, the segmented batch: 12 more launches) run in ``make test``.
"""

import importlib
import inspect
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import collectives as cl
from collectives.algorithms import CATALOG, supports

from ground_truth import expected_outputs

pytest.importorskip("torch")
from collectives import dist

NS = (1, 2, 3, 4)
CHUNK_LEN = 3  # elements per chunk in the batch's inputs

# dtype -> how to draw values. "exact" dtypes compare to ground truth bit for bit; random
# float64 sums depend on the addition order, so only simulate (same order) is exact there.
DTYPES = {
    "int64": lambda rng, shape: rng.integers(-1000, 1000, shape),
    "int8": lambda rng, shape: rng.integers(-128, 128, shape),  # sums wrap around
    "uint16": lambda rng, shape: rng.integers(0, 2**16, shape),  # gloo collectives: no
    "bool": lambda rng, shape: rng.integers(0, 2, shape),  # a bool sum is an OR
    "float16": lambda rng, shape: rng.integers(-50, 50, shape),  # integer-valued: exact
    "float32": lambda rng, shape: rng.integers(-1000, 1000, shape),
    "complex64": lambda rng, shape: rng.integers(-9, 9, shape) + 1j * rng.integers(-9, 9, shape),
    "float64": lambda rng, shape: rng.standard_normal(shape),  # not exact vs numpy's sum
}
TORCH_DTYPES = ("int64", "float32", "int8", "bool")


def _variants(name, n):
    """(label, schedule) for each way the test builds catalogue algorithm ``name`` at ``n``:
    the default, every root choice of a rooted one, and a split into 2 chunks/segments."""
    algorithm = CATALOG[name]
    params = inspect.signature(algorithm.build).parameters
    out = {"": algorithm.build(n)}
    if "root" in params:
        out = {f"root{root}": algorithm.build(n, root=root) for root in sorted({0, n - 1})}
    for split in ("n_chunks", "n_segments"):
        if split in params:
            options = {split: 2, **({"root": n // 2} if "root" in params else {})}
            label = "-".join(f"{k.replace('n_', '')}{v}" for k, v in options.items())
            out[label] = algorithm.build(n, **options)
    return list(out.items())


def _inputs(schedule, dtype, rng):
    n, spec = schedule.n_ranks, cl.semantics.collective_spec(schedule.collective)
    length = spec.input_chunks(n, schedule.n_chunks) * CHUNK_LEN
    return np.asarray(DTYPES[dtype](rng, (n, length))).astype(dtype)


def _torch_inputs(collective, n, dtype, rng):
    length = n * 2 if collective in ("reduce_scatter", "all_to_all", "scatter") else 5
    low, high = (0, 2) if dtype == "bool" else (-20, 20)
    small = rng.integers(low, high, (n, length))
    return small.astype(dtype)


def _build_cases():
    rng = np.random.default_rng(20240607)
    cases = []  # (id, schedule, {dtype: inputs})
    for name in sorted(CATALOG):
        for n in NS:
            if not supports(name, n):
                continue
            for label, schedule in _variants(name, n):
                ident = f"{name}-n{n}" + (f"-{label}" if label else "")
                cases.append((ident, schedule, {d: _inputs(schedule, d, rng) for d in DTYPES}))
    torch_cases = []  # (id, collective, root, n, dtype, inputs)
    for collective in (
        "all_gather",
        "reduce_scatter",
        "all_reduce",
        "all_to_all",
        "broadcast",
        "reduce",
        "gather",
        "scatter",
    ):
        for n in NS:
            root = n - 1 if collective in ROOTED else None
            for dtype in TORCH_DTYPES:
                torch_cases.append(
                    (
                        f"{collective}-n{n}-{dtype}",
                        collective,
                        root,
                        n,
                        dtype,
                        _torch_inputs(collective, n, dtype, rng),
                    )
                )
    return cases, torch_cases


ROOTED = ("broadcast", "reduce", "gather", "scatter")
ROOT_ROW_ONLY = ("reduce", "gather")  # only the root's row is defined
CASES, TORCH_CASES = _build_cases()


@pytest.fixture(scope="module")
def batch():
    """Every schedule x dtype and every torch collective, in one run_many (4 launches)."""
    jobs, keys = [], []
    for ident, schedule, inputs in CASES:
        for dtype, x in inputs.items():
            jobs.append((schedule, x))
            keys.append((ident, dtype))
    for ident, collective, root, _, _, x in TORCH_CASES:
        jobs.append((collective, x, root))
        keys.append(("torch", ident))
    for ident, schedule, inputs in CASES:  # torch's own op on each schedule's input
        jobs.append((schedule.collective, inputs["int64"], schedule.root))
        keys.append(("torch-same", ident))
    start = time.perf_counter()
    outputs = dist.run_many(jobs, timeout=120)
    seconds = time.perf_counter() - start
    print(f"\nrun_many: {len(jobs)} jobs over n={NS} in {seconds:.1f} s")
    return dict(zip(keys, outputs))


def _exact(dtype):
    return dtype != "float64"


@pytest.mark.parametrize("ident,schedule,inputs", CASES, ids=[c[0] for c in CASES])
@pytest.mark.slow  # starts processes
def test_run_equals_simulate_and_ground_truth(batch, ident, schedule, inputs):
    for dtype, x in inputs.items():
        got = batch[(ident, dtype)]
        want = cl.simulate(schedule, x)
        assert got.dtype == want.dtype == x.dtype, dtype
        assert got.shape == want.shape, dtype
        assert np.array_equal(got, want), f"{dtype}: run differs from simulate"
        truth = expected_outputs(schedule.collective, x, schedule.root)
        if schedule.collective in ROOT_ROW_ONLY:
            got = got[schedule.root]
        if _exact(dtype):
            assert np.array_equal(got, truth), f"{dtype}: run differs from the ground truth"
        else:
            np.testing.assert_allclose(got, truth, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "ident,collective,root,n,dtype,x", TORCH_CASES, ids=[c[0] for c in TORCH_CASES]
)
@pytest.mark.slow  # starts processes
def test_torch_collectives_give_the_ground_truth(batch, ident, collective, root, n, dtype, x):
    got = batch[("torch", ident)]
    truth = expected_outputs(collective, x, root)
    assert got.dtype == x.dtype and got.shape[0] == n
    if collective in ROOT_ROW_ONLY:
        got = got[root]
    assert np.array_equal(got, truth)


@pytest.mark.parametrize("ident,schedule,inputs", CASES, ids=[c[0] for c in CASES])
@pytest.mark.slow  # starts processes
def test_schedule_and_torch_agree_on_the_same_inputs(batch, ident, schedule, inputs):
    ours, theirs = batch[(ident, "int64")], batch[("torch-same", ident)]
    if schedule.collective in ROOT_ROW_ONLY:
        ours, theirs = ours[schedule.root], theirs[schedule.root]
    assert theirs.dtype == ours.dtype and np.array_equal(ours, theirs)


@pytest.mark.parametrize("n", [1, 2, 5, 8, 12])
def test_run_local_equals_simulate(n):
    rng = np.random.default_rng(n)
    for name in sorted(CATALOG):
        if not supports(name, n):
            continue
        for _, schedule in _variants(name, n):
            for dtype in ("int64", "float64", "float16"):
                x = _inputs(schedule, dtype, rng)
                got, want = dist.run_local(schedule, x), cl.simulate(schedule, x)
                assert got.dtype == want.dtype and np.array_equal(got, want), (name, dtype)


@pytest.mark.slow  # starts processes
def test_read_before_write_local_copies_and_scratch():
    # step 0: rank 0 copies its shard into its scratch slot 2 (a local transfer, no
    # message) while rank 1 sends its shard to rank 0's slot 1; step 1: rank 0 sends the
    # scratch copy to rank 1 and, in the same step, swaps its slots 0 and 1 locally. Every
    # read sees the buffers as they were when the step began, so the swap really swaps.
    s = cl.Schedule(
        "all_gather",
        2,
        2,
        [
            [(0, 0, 0, 2), (1, 0, 1, 1)],
            [(0, 1, 2, 0), (0, 0, 0, 1), (0, 0, 1, 0)],
        ],
        n_scratch=1,
    )
    x = np.array([[1.5, 2.5], [3.5, 4.5]], dtype=np.float32)
    want = np.array([[3.5, 4.5, 1.5, 2.5], [1.5, 2.5, 3.5, 4.5]], dtype=np.float32)
    assert np.array_equal(cl.simulate(s, x), want)
    assert np.array_equal(dist.run_local(s, x), want)
    got = dist.run(s, x)
    assert got.dtype == np.float32 and np.array_equal(got, want)


@pytest.mark.slow  # starts processes
def test_compare_with_torch():
    x = np.arange(3 * 6).reshape(3, 6) * 7
    result = dist.compare_with_torch(cl.algorithms.ring_reduce_scatter(3), x)
    assert result.equal and result.max_abs_diff == 0.0
    assert result.op == "torch.distributed.reduce_scatter_single"  # torch 2.13 name
    assert result.ranks == (0, 1, 2)
    assert np.array_equal(result.torch_outputs, expected_outputs("reduce_scatter", x))
    assert "equal=True" in repr(result)


@pytest.mark.slow
def test_compare_with_torch_reduce_checks_the_root_row_only():
    x = np.arange(4 * 3).reshape(4, 3)
    result = dist.compare_with_torch(cl.algorithms.binomial_tree_reduce(4, root=2), x)
    assert result.ranks == (2,) and result.equal
    assert np.array_equal(result.schedule_outputs[2], x.sum(axis=0))


@pytest.mark.slow
def test_collectives_over_groups_and_a_max_run_on_processes_and_agree_with_torch():
    # the all-reduce along axis 1 of a 2x3 torus: two groups of three, at once
    s = cl.algorithms.torus_all_reduce((2, 3), axes=(1,))
    x = np.arange(6 * 12).reshape(6, 12) % 7
    result = dist.compare_with_torch(s, x)  # the schedule, then torch subgroups, one per
    got = result.schedule_outputs  # group, in one launch: the run's own output
    assert got.dtype == x.dtype and np.array_equal(got, cl.simulate(s, x))
    assert np.array_equal(got[0], x[:3].sum(axis=0)) and np.array_equal(got[5], x[3:].sum(0))
    assert result.equal
    # the same ring with max (FP8's amax all-reduce), over the groups of the other axis
    ring = cl.algorithms.ring_all_reduce(2)
    amax = cl.Schedule.from_arrays(
        "all_reduce",
        2,
        2,
        ring.step_of_transfer,
        ring.src,
        ring.dst,
        ring.src_chunk,
        ring.dst_chunk,
        ring.reduce,
        n_steps=ring.n_steps,
        op="max",
    )
    grouped = cl.grouped(amax, [[0, 3], [1, 4], [2, 5]])
    y = (np.arange(6 * 4).reshape(6, 4) * 5) % 11
    result = dist.compare_with_torch(grouped, y)
    assert result.equal and result.op == "torch.distributed.all_reduce"
    assert np.array_equal(result.schedule_outputs[0], np.maximum(y[0], y[3]))


@pytest.mark.slow
def test_gather_and_scatter_agree_with_torch():
    x = np.arange(4 * 3).reshape(4, 3)
    assert dist.compare_with_torch(cl.algorithms.direct_gather(4, root=1), x).equal
    y = np.arange(4 * 8).reshape(4, 8)
    assert dist.compare_with_torch(cl.algorithms.direct_scatter(4, root=3), y).equal


# ---- segments: each message in pieces, combined as they land -------------------------------

SEGMENTED = (3, 7)  # 7 > CHUNK_LEN: some pieces of a one-row message are empty


@pytest.fixture(scope="module")
def segmented_batch():
    """Every catalogue algorithm at n = 4 (and the read-before-write swap at n = 2) with its
    messages in 3 and in 7 pieces, beside torch's own collective: 2 launches per count."""
    schedules = [(ident, schedule) for ident, schedule, _ in CASES if schedule.n_ranks == 4]
    rng = np.random.default_rng(7)
    out = {}
    for segments in SEGMENTED:
        jobs, keys = [], []
        for ident, schedule in schedules:
            x = _inputs(schedule, "float32", rng)
            jobs.append((schedule, x))
            keys.append((ident, x))
        swap_x = np.array([[1.5, 2.5], [3.5, 4.5]], dtype=np.float32)
        jobs.append((SWAP, swap_x))
        keys.append(("swap", swap_x))
        outputs = dist.run_many(jobs, timeout=120, segments=segments)
        out[segments] = [(ident, x, got) for (ident, x), got in zip(keys, outputs)]
    return dict(schedules), out


SWAP = cl.Schedule(
    "all_gather",
    2,
    2,
    [
        [(0, 0, 0, 2), (1, 0, 1, 1)],
        [(0, 1, 2, 0), (0, 0, 0, 1), (0, 0, 1, 0)],
    ],
    n_scratch=1,
)


@pytest.mark.slow
@pytest.mark.parametrize("segments", SEGMENTED)
def test_segmented_runs_equal_simulate_bit_for_bit(segmented_batch, segments):
    schedules, out = segmented_batch
    schedules["swap"] = SWAP
    assert len(out[segments]) == len(schedules)
    for ident, x, got in out[segments]:
        want = cl.simulate(schedules[ident], x)
        assert got.dtype == want.dtype and np.array_equal(got, want), (ident, segments)


@pytest.mark.slow
def test_segmented_ring_all_reduce_equals_torch_all_reduce():
    x = np.random.default_rng(3).integers(-1000, 1000, (4, 4 * 5)).astype(np.float32)
    for segments in (2, 5):
        comparison = dist.compare_with_torch(cl.algorithms.ring_all_reduce(4), x, segments=segments)
        assert comparison.equal, segments
        assert np.array_equal(comparison.torch_outputs, np.tile(x.sum(axis=0), (4, 1)))


@pytest.mark.parametrize("segments", [0, dist.MAX_SEGMENTS + 1, 2.5, True, "4"])
def test_bad_segments_are_refused_before_any_process(no_launch, segments):
    s, x = cl.algorithms.ring_all_reduce(2), np.zeros((2, 2))
    message = (
        f"segments must be an integer from 1 to {dist.MAX_SEGMENTS} (pieces per "
        f"message), got {segments!r}"
    )
    for call in (
        lambda: dist.run(s, x, segments=segments),
        lambda: dist.run_local(s, x, segments=segments),
        lambda: dist.compare_with_torch(s, x, segments=segments),
    ):
        with pytest.raises(dist.DistError) as got:
            call()
        assert str(got.value) == message


# ---- errors ---------------------------------------------------------------------------------


def test_in_network_schedules_and_permutes_are_refused_clearly(no_launch):
    with pytest.raises(dist.DistError, match="reduces inside 1 switch"):
        dist.run(cl.algorithms.nvls_all_reduce(2), np.ones((2, 2)))
    with pytest.raises(
        cl.CollectivesError, match=r"torch\.distributed has no collective for permute"
    ):
        dist.compare_with_torch(cl.algorithms.pipeline_shift(2), np.ones((2, 2)))


BAD_INPUTS = {
    "too few rows": np.zeros((2, 3)),
    "one dimension": np.zeros(9),
    "ragged": [[1, 2, 3], [1, 2], [1, 2, 3]],
    "strings": np.array([["a"] * 3] * 3),
    "row does not split into chunks": np.zeros((3, 4)),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_inputs_raise_the_simulate_error_before_starting_processes(no_launch, case):
    s = cl.algorithms.ring_all_reduce(3)
    with pytest.raises(cl.CollectivesError) as want:
        cl.simulate(s, BAD_INPUTS[case])
    with pytest.raises(cl.CollectivesError) as got:
        dist.run(s, BAD_INPUTS[case])
    assert type(got.value) is type(want.value)
    assert str(got.value) == str(want.value)


def test_not_a_schedule(no_launch):
    with pytest.raises(
        cl.ScheduleError, match=r"schedule must be a collectives\.Schedule, got list"
    ):
        dist.run([[(0, 1, 0, 0)]], np.zeros((2, 2)))


def test_reading_an_empty_slot_fails_like_simulate_before_starting_processes(no_launch):
    # rank 0 starts with its shard in slot 0 only; slot 1 is empty until rank 1's arrives
    bad = cl.Schedule("all_gather", 2, 2, [[(0, 1, 1, 0)]])
    x = np.arange(4).reshape(2, 2)
    with pytest.raises(cl.ScheduleError) as want:
        cl.simulate(bad, x)
    for runner in (dist.run, dist.run_local):
        with pytest.raises(cl.ScheduleError) as got:
            runner(bad, x)
        assert str(got.value) == str(want.value)
        assert str(got.value) == (
            "step 0, transfer 0 (copy rank 0 chunk 1 -> rank 1 chunk 0): "
            "rank 0 chunk 1 holds nothing yet"
        )
        assert (got.value.step, got.value.rank, got.value.chunk) == (0, 0, 1)


@pytest.mark.slow  # starts processes
def test_a_dtype_gloo_collectives_reject_is_reported_by_rank():
    with pytest.raises(
        dist.DistError,
        match=r"^rank [01] of 2 failed over gloo in job 0 "
        r"\(torch.distributed all_reduce\): CollectivesError: "
        r"torch.distributed.all_reduce over gloo does not support dtype int16",
    ):
        dist.run_torch("all_reduce", np.ones((2, 3), dtype=np.int16))


def test_other_argument_errors(no_launch):
    s = cl.algorithms.ring_all_gather(2)
    x = np.zeros((2, 1))
    with pytest.raises(
        cl.CollectivesError, match="timeout must be a positive number of seconds, got 0"
    ):
        dist.run(s, x, timeout=0)
    with pytest.raises(
        cl.CollectivesError,
        match=r"job 1: expected \(schedule, inputs\) or "
        r"\(collective, inputs\[, root\]\)",
    ):
        dist.run_many([(s, x), s])
    with pytest.raises(cl.CollectivesError, match="unknown collective 'allgather'"):
        dist.run_torch("allgather", x)
    with pytest.raises(cl.CollectivesError, match=r"root must be a rank \(0..1\), got 2"):
        dist.run_torch("broadcast", x, root=2)
    with pytest.raises(cl.CollectivesError, match="all_reduce has no root; got root=0"):
        dist.run_torch("all_reduce", x, root=0)
    with pytest.raises(
        cl.CollectivesError,
        match="reduce_scatter over 2 ranks needs rows whose length divides into 2 equal parts",
    ):
        dist.run_torch("reduce_scatter", np.zeros((2, 3)))
    assert dist.run_many([]) == []
    big = cl.algorithms.ring_all_gather(dist.MAX_LOCAL_RANKS + 1)
    with pytest.raises(cl.CollectivesError, match="run starts one process per rank; 65 ranks"):
        dist.run(big, np.zeros((dist.MAX_LOCAL_RANKS + 1, 1)))


@pytest.mark.slow  # starts processes
def test_importing_the_package_does_not_import_torch():
    code = (
        "import sys, collectives, collectives.dist; "
        "assert 'torch' not in sys.modules, 'torch was imported'"
    )
    subprocess.run(
        [sys.executable, "-c", code],
        check=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[3],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])},
    )


# ---- torch's own device mesh beside collectives.Mesh --------------------------------------


@pytest.mark.slow
def test_torch_device_mesh_makes_the_groups_mesh_names():
    # init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp")) on four processes: the
    # tp groups are {0, 1} and {2, 3} (the last axis varies fastest), the dp groups {0, 2}
    # and {1, 3}, the same rank lists collectives.Mesh gives
    mesh = cl.Mesh({"dp": 2, "tp": 2})
    groups = dist.device_mesh_groups(mesh, timeout=120)
    assert set(groups) == {"dp", "tp"}
    assert groups["tp"].tolist() == [[0, 1], [2, 3]] == mesh.groups("tp").tolist()
    assert groups["dp"].tolist() == [[0, 2], [1, 3]] == mesh.groups("dp").tolist()


def test_device_mesh_groups_checks_before_any_process(monkeypatch):
    jobs = importlib.import_module("collectives.dist.jobs")
    monkeypatch.setattr(jobs, "run_tasks", lambda *a, **k: pytest.fail("a process started"))
    with pytest.raises(cl.CollectivesError, match="the size of mesh axis 'tp'"):
        dist.device_mesh_groups({"dp": 2, "tp": 0})
    with pytest.raises(cl.CollectivesError, match="unknown backend"):
        dist.device_mesh_groups({"dp": 2}, backend="mpi")
