"""collectives/dist/sweep.py: the nccl-tests-style sweep, and mesh groups on processes (the
torchrun entry point, the backend choice and a worker's failures are tested in
test_torchrun_main.py, test_launch.py and test_worker.py).

Launches are slow (each worker imports torch), so each test starts one process group with
few, small sizes; the figures themselves are never asserted (timing is for bench/dist.py),
only what must hold whatever the machine: the definitions of algbw and busbw, the check of
the result, and that nothing is left running. ``make check`` runs one sweep; the segmented,
broken and grouped sweeps are marked ``slow`` (``make test`` runs them).
"""

import importlib

import numpy as np
import pytest

import collectives as cl

from processes import marked as _marked

pytest.importorskip("torch")
from collectives import dist

sweep_module = importlib.import_module("collectives.dist.sweep")  # the function hides it
KIB = 1024


# ---- sizes and rows: no processes ---------------------------------------------------------


def test_sizes_are_nccl_tests_powers_of_two():
    s = dist.sizes()
    assert s[0] == 1024 and s[-1] == 64 * 2**20 and len(s) == 17  # 2**10 .. 2**26
    assert all(b == 2 * a for a, b in zip(s, s[1:]))
    assert dist.sizes(1000, 8000, 4) == [1000, 4000]
    with pytest.raises(cl.CollectivesError, match="need factor >= 2 and max_bytes >= min_bytes"):
        dist.sizes(2048, 1024)
    with pytest.raises(cl.CollectivesError, match="min_bytes must be a positive integer"):
        dist.sizes(0)


def test_pattern_is_small_exact_integers():
    rows = np.stack([sweep_module.pattern(r, 1000, np.float32) for r in range(64)])
    assert rows.min() >= -3 and rows.max() <= 8 and np.array_equal(rows, np.round(rows))
    assert not np.array_equal(rows[0], rows[1])  # ranks differ: a lost row shows


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (
            {"sizes_bytes": [1000]},
            "1000 bytes of float32 do not split into the 4 equal chunks "
            "of ring_all_reduce; use sizes that are multiples of 16 bytes",
        ),
        ({"sizes_bytes": []}, "sizes_bytes is empty"),
        ({"sizes_bytes": [-16]}, "sizes must be positive integers of bytes, got -16"),
        ({"iters": 0}, "iters must be an integer >= 1, got 0"),
        ({"warmup": -1}, "warmup must be an integer >= 0, got -1"),
        ({"repeats": 0}, "repeats must be an integer >= 1, got 0"),
        ({"dtype": "complex64"}, "dtype must be an integer or float dtype, got complex64"),
        ({"dtype": "nonsense"}, "dtype must be a numpy numeric dtype"),
    ],
)
def test_bad_sweep_arguments_are_refused_before_any_process(kwargs, message, monkeypatch):
    monkeypatch.setattr(sweep_module, "run_tasks", _refuse)
    with pytest.raises(cl.CollectivesError, match=message.replace("(", r"\(")):
        dist.sweep(cl.algorithms.ring_all_reduce(4), **kwargs)


def test_a_collective_torch_cannot_time_is_refused(monkeypatch):
    monkeypatch.setattr(sweep_module, "run_tasks", _refuse)
    with pytest.raises(cl.CollectivesError, match="for gather pass torch=False"):
        dist.sweep(cl.algorithms.direct_gather(2), [64])


def _refuse(*args, **kwargs):
    raise AssertionError("a worker process was started")


def test_repeats_are_whole_passes_summarised_by_their_median():
    ring = cl.algorithms.ring_all_reduce(2)
    tasks, meta = sweep_module.plan(ring, [64, 128], iters=1, warmup=0, torch=False, repeats=3)
    # three passes over both sizes, one after the other (nccl-tests' -N cycles)
    assert [(t["repeat"], m[0]) for t, m in zip(tasks, meta)] == [
        (0, 64),
        (0, 128),
        (1, 64),
        (1, 128),
        (2, 64),
        (2, 128),
    ]
    assert tasks[2]["what"] == "schedule 'ring_all_reduce' at 64 bytes (repeat 2 of 3)"
    # per task, each rank's (wrong, seconds); rank times of a repeat are averaged, then the
    # median of the repeats is taken: at 64 bytes the repeats average 2, 6 and 3 ms
    # (median 3 ms, range 2..6), at 128 bytes 4, 4 and 10 ms (median 4); one wrong element
    # on rank 1 in the second pass at 128 bytes
    results = [
        [(0, 1e-3), (0, 3e-3)],
        [(0, 4e-3), (0, 4e-3)],
        [(0, 6e-3), (0, 6e-3)],
        [(0, 4e-3), (1, 4e-3)],
        [(0, 3e-3), (0, 3e-3)],
        [(0, 10e-3), (0, 10e-3)],
    ]
    result = sweep_module.summarise(ring, tasks, meta, results, "gloo")
    assert result.repeats == 3
    small, large = result.rows
    assert (small.size, small.time_us, small.time_min_us, small.time_max_us) == (
        64,
        pytest.approx(3000),
        pytest.approx(2000),
        pytest.approx(6000),
    )
    assert small.algbw == pytest.approx(64 / 3e-3 / 1e9)  # from the median
    assert (large.time_us, large.time_max_us, large.wrong) == (
        pytest.approx(4000),
        pytest.approx(10_000),
        1,
    )
    table = dist.format_table(result).splitlines()
    assert table[0].endswith("1 iterations, 0 warm-up, median of 3 repeats")
    assert table[1].split()[-3:] == ["min", "max", "impl"]
    assert table[3].split()[-4:] == ["0", "2000.0", "6000.0", "ring_all_reduce"]


def test_torch_rows_carry_the_current_names_not_the_deprecated_ones():
    # torch 2.13 deprecates all_gather_into_tensor and reduce_scatter_tensor in favour of
    # all_gather_single and reduce_scatter_single (distributed_c10d.py, @deprecated); the
    # sweep labels (and, in the worker, calls) the newer name
    labels = {}
    for algorithm in (
        cl.algorithms.ring_all_gather(2),
        cl.algorithms.ring_reduce_scatter(2),
        cl.algorithms.ring_all_reduce(2),
    ):
        tasks, meta = sweep_module.plan(algorithm, [64], iters=1, warmup=0)
        labels[algorithm.collective] = meta[1][2]
        assert tasks[1]["what"] == f"{meta[1][2]} at 64 bytes"
    assert labels == {
        "all_gather": "torch.distributed.all_gather_single",
        "reduce_scatter": "torch.distributed.reduce_scatter_single",
        "all_reduce": "torch.distributed.all_reduce",
    }


# ---- the sweep on processes ---------------------------------------------------------------


@pytest.mark.slow  # starts processes
def test_sweep_ring_all_reduce_against_torch(marked_env):
    sizes = [1 * KIB, 4 * KIB, 16 * KIB]
    result = dist.sweep(cl.algorithms.ring_all_reduce(4), sizes, iters=2, warmup=1)
    assert (result.collective, result.group_size, result.n_ranks, result.backend) == (
        "all_reduce",
        4,
        4,
        "gloo",
    )
    assert [(r.size, r.impl) for r in result.rows] == [
        (s, impl) for s in sizes for impl in ("ring_all_reduce", "torch.distributed.all_reduce")
    ]
    for r in result.rows:
        assert r.count == r.size // 4 and r.type == "float32" and r.redop == "sum"
        assert r.wrong == 0
        assert r.time_us > 0
        # doc/PERFORMANCE.md: algbw = S / t (GB/s = 1e9 B/s); busbw = algbw * 2(n-1)/n = 1.5
        assert r.algbw == pytest.approx(r.size / (r.time_us * 1e-6) / 1e9, rel=1e-12)
        assert r.busbw == pytest.approx(r.algbw * 1.5, rel=1e-12)
    frame = result.to_frame()
    # nccl-tests' columns, then the fastest and slowest repeat (one repeat here: both equal
    # the time)
    assert list(frame.columns) == [
        "size",
        "count",
        "type",
        "redop",
        "impl",
        "time_us",
        "algbw",
        "busbw",
        "wrong",
        "time_min_us",
        "time_max_us",
    ]
    assert all(r.time_min_us == r.time_us == r.time_max_us for r in result.rows)
    assert len(frame) == 6
    assert result.ratio(4 * KIB) == pytest.approx(result.rows[2].busbw / result.rows[3].busbw)
    table = dist.format_table(result).splitlines()
    assert table[0] == "# all_reduce over 4 ranks (4 processes, gloo), 2 iterations, 1 warm-up"
    assert table[3].split()[:4] == ["1024", "256", "float32", "sum"]
    assert table[3].split()[-2:] == ["0", "ring_all_reduce"]
    assert not _marked(marked_env)


@pytest.mark.slow
def test_a_segmented_sweep_checks_and_times_both():
    result = dist.sweep(cl.algorithms.ring_all_reduce(4), [4 * KIB], iters=1, warmup=0, segments=4)
    assert [(r.impl, r.wrong) for r in result.rows] == [
        ("ring_all_reduce", 0),
        ("torch.distributed.all_reduce", 0),
    ]
    with pytest.raises(dist.DistError, match="segments must be an integer from 1 to 1024"):
        dist.sweep(cl.algorithms.ring_all_reduce(4), [4 * KIB], segments=0)


@pytest.mark.slow
def test_a_wrong_schedule_is_counted_wrong():
    ring = cl.algorithms.ring_all_reduce(4)
    broken = ring.reduce.copy()
    broken[np.flatnonzero(broken)[0]] = False  # one reduce becomes a copy
    bad = cl.Schedule.from_arrays(
        "all_reduce",
        4,
        4,
        ring.step_of_transfer,
        ring.src,
        ring.dst,
        ring.src_chunk,
        ring.dst_chunk,
        broken,
        n_steps=ring.n_steps,
        name="broken_ring",
    )
    result = dist.sweep(bad, [64], iters=1, warmup=0, torch=False)
    (row,) = result.rows
    # transfer 0 (rank 0 chunk 3 -> rank 1) now overwrites rank 1's chunk 3: rank 1's
    # values there (pattern(1, 16)[12:] = -2, 3, 1, -1, none zero) are missing from the
    # result's chunk 3, on all 4 ranks: 4 x 4 wrong elements
    assert row.impl == "broken_ring" and row.wrong == 4 * 4


@pytest.mark.slow
def test_a_grouped_collective_over_a_mesh_axis_runs_on_torch_sub_groups(capsys):
    mesh = cl.Mesh({"dp": 2, "tp": 2})
    schedule = mesh.collective(cl.algorithms.ring_all_gather(2), "tp")
    assert schedule.groups.tolist() == [[0, 1], [2, 3]]
    x = np.arange(4 * 3).reshape(4, 3)
    comparison = dist.compare_with_torch(schedule, x)
    assert comparison.equal
    assert np.array_equal(comparison.schedule_outputs[2], np.concatenate([x[2], x[3]]))
    result = dist.sweep(schedule, [64, 256], iters=1, warmup=0, progress=True)
    assert [r.wrong for r in result.rows] == [0, 0, 0, 0]
    assert result.group_size == 2 and result.n_ranks == 4
    for r in result.rows:  # busbw factor of the group: (m-1)/m = 1/2
        assert r.busbw == pytest.approx(r.algbw / 2, rel=1e-12)
    assert "sweep on 4 processes" in capsys.readouterr().err  # the tqdm bar


def test_plot_sweep_draws_one_line_per_implementation():
    import matplotlib

    matplotlib.use("Agg")
    from collectives.viz.dist import plot_sweep

    rows = tuple(
        dist.SweepRow(s, s // 4, "float32", "sum", impl, 10.0, s / 1e4, s / 1e4 * 1.5, 0)
        for s in (1024, 2048)
        for impl in ("ring_all_reduce", "torch")
    )
    result = dist.SweepResult("all_reduce", 4, 4, "gloo", 1, 0, rows)
    ax = plot_sweep(result, reference=1.0, reference_label="model")
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["ring_all_reduce", "torch", "model"]
    assert list(lines[0].get_ydata()) == [1024 / 1e4 * 1.5, 2048 / 1e4 * 1.5]
    with pytest.raises(cl.CollectivesError, match="plot_sweep needs a SweepResult"):
        plot_sweep([])
