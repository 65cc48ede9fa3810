"""collectives.dist: the nccl-tests-style sweep, mesh groups on processes, the torchrun entry
point, the backend choice, and failures (a rank that dies, hangs or mismatches).

Launches are slow (each worker imports torch), so each test starts one process group with
few, small sizes; the figures themselves are never asserted (timing is for bench/dist.py),
only what must hold whatever the machine: the definitions of algbw and busbw, the check of
the result, and that nothing is left running.

``make check`` runs one sweep and each kind of failure on whole messages; the tests marked
``slow`` (segmented, grouped and broken sweeps, failures of segmented messages, torchrun)
run in ``make test``.
"""

import importlib
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import collectives as cl
from collectives.algorithms import CATALOG, supports

pytest.importorskip("torch")
from collectives import dist  # noqa: E402  (after the torch check)
from collectives.dist.jobs import _schedule_job  # noqa: E402
from collectives.dist.torchrun_main import parse_mesh, parse_size  # noqa: E402

sweep_module = importlib.import_module("collectives.dist.sweep")  # the function hides it
ROOT = Path(__file__).resolve().parents[3]
KIB = 1024


def _children():
    """Processes this test process has started and not yet reaped (Linux)."""
    found = set()
    for path in Path("/proc/self/task").glob("*/children"):
        found.update(int(pid) for pid in path.read_text().split())
    return found


def _marked(mark):
    """Live processes whose environment holds ``mark`` (grandchildren included)."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if mark.encode() in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:
            continue
    return found


@pytest.fixture
def marked_env(monkeypatch):
    """A unique variable in this process's environment: every process started from here
    inherits it, so a leftover one can be found in /proc."""
    mark = f"COLLECTIVES_TEST_{uuid.uuid4().hex}"
    monkeypatch.setenv("COLLECTIVES_LEAK_MARK", mark)
    return mark


# ---- sizes and rows: no processes ---------------------------------------------------------

def test_sizes_are_nccl_tests_powers_of_two():
    s = dist.sizes()
    assert s[0] == 1024 and s[-1] == 64 * 2**20 and len(s) == 17      # 2**10 .. 2**26
    assert all(b == 2 * a for a, b in zip(s, s[1:]))
    assert dist.sizes(1000, 8000, 4) == [1000, 4000]
    with pytest.raises(cl.CollectivesError, match="need factor >= 2 and max_bytes >= "
                                                  "min_bytes"):
        dist.sizes(2048, 1024)
    with pytest.raises(cl.CollectivesError, match="min_bytes must be a positive integer"):
        dist.sizes(0)


def test_pattern_is_small_exact_integers():
    rows = np.stack([sweep_module.pattern(r, 1000, np.float32) for r in range(64)])
    assert rows.min() >= -3 and rows.max() <= 8 and np.array_equal(rows, np.round(rows))
    assert not np.array_equal(rows[0], rows[1])        # ranks differ: a lost row shows


@pytest.mark.parametrize("kwargs,message", [
    ({"sizes_bytes": [1000]}, "1000 bytes of float32 do not split into the 4 equal chunks "
                              "of ring_all_reduce; use sizes that are multiples of 16 bytes"),
    ({"sizes_bytes": []}, "sizes_bytes is empty"),
    ({"sizes_bytes": [-16]}, "sizes must be positive integers of bytes, got -16"),
    ({"iters": 0}, "iters must be an integer >= 1, got 0"),
    ({"warmup": -1}, "warmup must be an integer >= 0, got -1"),
    ({"dtype": "complex64"}, "dtype must be an integer or float dtype, got complex64"),
    ({"dtype": "nonsense"}, "dtype must be a numpy numeric dtype"),
])
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


@given(n=st.integers(2, 6), seed=st.integers(0, 2**31 - 1),
       name=st.sampled_from(sorted(CATALOG)), dtype=st.sampled_from(["float32", "int64"]),
       segments=st.integers(1, 9), chunk_len=st.integers(1, 5))
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
    assert np.array_equal(dist.run_local(schedule, x, segments=segments),
                          cl.simulate(schedule, x))


# ---- the sweep on processes ---------------------------------------------------------------

def test_sweep_ring_all_reduce_against_torch(marked_env):
    sizes = [1 * KIB, 4 * KIB, 16 * KIB]
    result = dist.sweep(cl.algorithms.ring_all_reduce(4), sizes, iters=2, warmup=1)
    assert (result.collective, result.group_size, result.n_ranks, result.backend) == \
        ("all_reduce", 4, 4, "gloo")
    assert [(r.size, r.impl) for r in result.rows] == [
        (s, impl) for s in sizes for impl in ("ring_all_reduce", "torch.distributed.all_reduce")]
    for r in result.rows:
        assert r.count == r.size // 4 and r.type == "float32" and r.redop == "sum"
        assert r.wrong == 0
        assert r.time_us > 0
        # doc/PERFORMANCE.md: algbw = S / t (GB/s = 1e9 B/s); busbw = algbw * 2(n-1)/n = 1.5
        assert r.algbw == pytest.approx(r.size / (r.time_us * 1e-6) / 1e9, rel=1e-12)
        assert r.busbw == pytest.approx(r.algbw * 1.5, rel=1e-12)
    frame = result.to_frame()
    assert list(frame.columns) == ["size", "count", "type", "redop", "impl", "time_us",
                                   "algbw", "busbw", "wrong"]
    assert len(frame) == 6
    assert result.ratio(4 * KIB) == pytest.approx(result.rows[2].busbw / result.rows[3].busbw)
    table = dist.format_table(result).splitlines()
    assert table[0] == "# all_reduce over 4 ranks (4 processes, gloo), 2 iterations, 1 warm-up"
    assert table[3].split()[:4] == ["1024", "256", "float32", "sum"]
    assert table[3].split()[-2:] == ["0", "ring_all_reduce"]
    assert not _marked(marked_env)


@pytest.mark.slow
def test_a_segmented_sweep_checks_and_times_both():
    result = dist.sweep(cl.algorithms.ring_all_reduce(4), [4 * KIB], iters=1, warmup=0,
                        segments=4)
    assert [(r.impl, r.wrong) for r in result.rows] == [
        ("ring_all_reduce", 0), ("torch.distributed.all_reduce", 0)]
    with pytest.raises(dist.DistError, match="segments must be an integer from 1 to 1024"):
        dist.sweep(cl.algorithms.ring_all_reduce(4), [4 * KIB], segments=0)


@pytest.mark.slow
def test_a_wrong_schedule_is_counted_wrong():
    ring = cl.algorithms.ring_all_reduce(4)
    broken = ring.reduce.copy()
    broken[np.flatnonzero(broken)[0]] = False      # one reduce becomes a copy
    bad = cl.Schedule.from_arrays("all_reduce", 4, 4, ring.step_of_transfer, ring.src,
                                  ring.dst, ring.src_chunk, ring.dst_chunk, broken,
                                  n_steps=ring.n_steps, name="broken_ring")
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
    for r in result.rows:                  # busbw factor of the group: (m-1)/m = 1/2
        assert r.busbw == pytest.approx(r.algbw / 2, rel=1e-12)
    assert "sweep on 4 processes" in capsys.readouterr().err      # the tqdm bar


def test_plot_sweep_draws_one_line_per_implementation():
    import matplotlib
    matplotlib.use("Agg")
    from collectives.viz.dist import plot_sweep

    rows = tuple(dist.SweepRow(s, s // 4, "float32", "sum", impl, 10.0, s / 1e4, s / 1e4 * 1.5, 0)
                 for s in (1024, 2048) for impl in ("ring_all_reduce", "torch"))
    result = dist.SweepResult("all_reduce", 4, 4, "gloo", 1, 0, rows)
    ax = plot_sweep(result, reference=1.0, reference_label="model")
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["ring_all_reduce", "torch", "model"]
    assert list(lines[0].get_ydata()) == [1024 / 1e4 * 1.5, 2048 / 1e4 * 1.5]
    with pytest.raises(cl.CollectivesError, match="plot_sweep needs a SweepResult"):
        plot_sweep([])


# ---- backends -----------------------------------------------------------------------------

def test_auto_backend_is_gloo_without_cuda():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: see test_auto_backend_picks_nccl_on_gpus")
    assert dist.resolve_backend("auto", 4) == "gloo"
    assert dist.resolve_backend("gloo") == "gloo"
    with pytest.raises(cl.CollectivesError, match="unknown backend 'mpi'"):
        dist.resolve_backend("mpi")


def test_auto_backend_picks_nccl_on_gpus():
    import torch

    if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
        pytest.skip("needs 2 CUDA GPUs (NCCL); not counted as passing")
    assert dist.resolve_backend("auto", 2) == "nccl"
    result = dist.sweep(cl.algorithms.ring_all_reduce(2), [4 * KIB], iters=2, backend="auto")
    assert result.backend == "nccl" and all(r.wrong == 0 for r in result.rows)


# ---- failures: the rank, the step, the reason; nothing left behind --------------------------

FAILURES = [
    ("die", r"^rank 1 of 2 failed over gloo in job 0 \(schedule 'ring_all_reduce'\) at step "
            r"1 of 2: ProcessDied: exited with code 70 without a Python exception"),
    ("mismatch", r"(?s)^rank 0 of 2 failed over gloo in job 0 \(schedule 'ring_all_reduce'\) "
                 r"at step 1 of 2: ProcessDied: was killed by SIGABRT.*Received data size "
                 r"doesn't match expected size"),
    ("hang", r"^no progress for 2 s running 2 ranks over gloo: rank\(s\) 0, 1 had not "
             r"finished \(rank 0 in job 0 \(schedule 'ring_all_reduce'\) at step 1 of 2; "
             r"rank 1 in job 0 \(schedule 'ring_all_reduce'\) at step 1 of 2; a rank that "
             r"never returns from a step is waiting for a message no peer sends"),
]


@pytest.mark.parametrize("kind,expected,segments",
                         [f + (1,) for f in FAILURES] +                     # whole messages
                         [pytest.param(*f, 3, marks=pytest.mark.slow)       # in pieces
                          for f in FAILURES if f[0] != "mismatch"])
def test_a_rank_that_dies_mismatches_or_hangs_is_named_with_its_step(
        kind, expected, segments, monkeypatch, tmp_path, marked_env):
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
        monkeypatch, tmp_path, marked_env):
    """Rank 1 sends a message one row too long at step 1, in 3 pieces. A row holds 2
    elements (4 elements over 2 chunks): rank 0 expects 2 elements, cut at 2*j//3 = 0, 0,
    1, 2 into pieces of 1 and 1; rank 1 sends 4, cut at 0, 1, 2, 4 into 1, 1 and 2. The
    first two match, so nothing aborts: rank 0 finishes, rank 1 waits forever to send its
    third piece, and the run ends there, naming rank 1 at step 1."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    job = _schedule_job(cl.algorithms.ring_all_reduce(2),
                        np.arange(8, dtype=np.float32).reshape(2, 4), 3)
    job["fault"] = {"rank": 1, "step": 1, "kind": "mismatch"}
    before = _children()
    with pytest.raises(dist.DistError) as got:
        dist.launch.run_tasks(2, [job], "gloo", 120.0, stall=2.0)
    assert str(got.value) == (
        "no progress for 2 s running 2 ranks over gloo: rank(s) 0, 1 had not finished (rank "
        "0 in the final barrier, waiting for the others; rank 1 in job 0 (schedule "
        "'ring_all_reduce') at step 1 of 2; a rank that never returns from a step is "
        "waiting for a message no peer sends, or sending one no peer receives)")
    assert got.value.unfinished == (0, 1)
    assert _children() <= before
    assert not _marked(marked_env)


# ---- torchrun -----------------------------------------------------------------------------

def test_parse_size_and_mesh():
    assert [parse_size(t) for t in ("1024", "1K", "64M", "1G", "2kb")] == \
        [1024, 1024, 64 * 2**20, 2**30, 2048]
    assert parse_mesh("dp=2,tp=4") == {"dp": 2, "tp": 4}
    import argparse
    for bad in ("", "0", "1X", "-1K"):
        with pytest.raises(argparse.ArgumentTypeError, match="size must look like"):
            parse_size(bad)
    with pytest.raises(argparse.ArgumentTypeError, match="mesh must look like dp=2,tp=4"):
        parse_mesh("dp:2")


def _env():
    return {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}


def test_torchrun_main_outside_torchrun_says_how_to_start_it(tmp_path):
    env = {k: v for k, v in _env().items() if k not in ("RANK", "WORLD_SIZE")}
    proc = subprocess.run([sys.executable, "-m", "collectives.dist.torchrun_main",
                           "ring_all_reduce"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 2
    assert "RANK and WORLD_SIZE are not set: start this module with torchrun" in proc.stderr


@pytest.mark.slow
def test_the_same_schedule_runs_under_torchrun_on_four_processes(tmp_path, marked_env):
    """torch's own launcher, as on a cluster: --standalone --nproc-per-node 4, loopback."""
    before = _children()
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node",
         "4", "-m", "collectives.dist.torchrun_main", "ring_all_reduce", "-b", "1K", "-e",
         "4K", "-n", "2", "--mesh", "dp=2,tp=2", "--axis", "tp"],
        capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [line.split() for line in proc.stdout.splitlines() if not line.startswith("#")]
    assert proc.stdout.startswith("# all_reduce over 2 ranks (4 processes, gloo)")
    assert [(row[0], row[-1]) for row in lines] == [
        (str(s), impl) for s in (1024, 2048, 4096)
        for impl in ("ring_all_reduce[tp]", "torch.distributed.all_reduce")]
    assert all(row[-2] == "0" for row in lines)            # #wrong
    assert _children() <= before
    assert not _marked(marked_env)


@pytest.mark.parametrize("noticed_first", [0, 1])
def test_the_dead_rank_is_named_not_the_peer_that_lost_it(tmp_path, noticed_first):
    # rank 1 died without a Python exception; rank 0's gloo then reported the closed socket.
    # Whichever exit the launcher noticed first, the error names rank 1 (the CI saw rank 0
    # named once, when both exits landed in the same poll).
    import pickle
    from types import SimpleNamespace

    from collectives.dist import launch

    schedule = cl.algorithms.ring_all_reduce(2)
    with open(tmp_path / "error0.pkl", "wb") as f:
        pickle.dump({"type": "RuntimeError", "primary": False, "key": None, "task": 0,
                     "message": "[gloo/transport/tcp/pair.cc:553] Connection closed by peer "
                                "[127.0.0.1]:57050", "traceback": ""}, f)
    procs = [SimpleNamespace(returncode=1), SimpleNamespace(returncode=70)]
    board = SimpleNamespace(rows=np.array([[0, 1, 0], [0, 1, 0]], dtype=np.int64))
    tasks = [{"what": "schedule 'ring_all_reduce'", "schedule": schedule}]
    failed = [noticed_first, 1 - noticed_first]
    err = launch._failure(procs, tmp_path, failed, "gloo", tasks, ["0"], board)
    assert err.rank == 1 and err.exception == "ProcessDied"
    assert str(err).startswith("rank 1 of 2 failed over gloo in job 0 (schedule "
                               "'ring_all_reduce') at step 1 of 2: ProcessDied: exited with "
                               "code 70")
    assert str(err).endswith("(rank(s) 0 failed too)")
