"""collectives/dist/launch.py: starting the workers, the backend choice, timeouts, and which
failure is named the root cause; nothing is left running."""

import tempfile
import time

import numpy as np
import pytest

import collectives as cl

from processes import children as _children

pytest.importorskip("torch")
from collectives import dist

KIB = 1024


@pytest.mark.slow  # starts processes
def test_timeout_kills_the_workers(monkeypatch, tmp_path):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    before = _children()
    start = time.perf_counter()
    with pytest.raises(
        dist.DistError,
        match=r"^timed out after 0.2 s running 2 ranks over "
        r"gloo: rank\(s\) 0, 1 had not finished",
    ) as got:
        dist.run(cl.algorithms.ring_all_gather(2), np.zeros((2, 1)), timeout=0.2)
    assert time.perf_counter() - start < 5
    assert got.value.unfinished == (0, 1) and got.value.rank is None
    assert _children() <= before
    assert not list(tmp_path.glob("collectives-dist-*"))


@pytest.mark.parametrize("backend", ["mpi", "NCCL", None, 3])
def test_unknown_backend(no_launch, backend):
    with pytest.raises(
        cl.CollectivesError,
        match=rf"^unknown backend {backend!r}; expected "
        r"'gloo' \(CPU, any machine\) or 'nccl'",
    ):
        dist.run(cl.algorithms.ring_all_gather(2), np.zeros((2, 1)), backend=backend)


def test_nccl_without_gpus_is_a_clear_error(no_launch):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(
        cl.CollectivesError,
        match=r"^backend 'nccl' needs NVIDIA GPUs and a "
        r"torch build with NCCL; this machine has 0 CUDA device\(s\)",
    ):
        dist.run(cl.algorithms.ring_all_gather(2), np.zeros((2, 1)), backend="nccl")


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
        pickle.dump(
            {
                "type": "RuntimeError",
                "primary": False,
                "key": None,
                "task": 0,
                "message": "[gloo/transport/tcp/pair.cc:553] Connection closed by peer "
                "[127.0.0.1]:57050",
                "traceback": "",
            },
            f,
        )
    procs = [SimpleNamespace(returncode=1), SimpleNamespace(returncode=70)]
    board = SimpleNamespace(rows=np.array([[0, 1, 0], [0, 1, 0]], dtype=np.int64))
    tasks = [{"what": "schedule 'ring_all_reduce'", "schedule": schedule}]
    failed = [noticed_first, 1 - noticed_first]
    err = launch._failure(procs, tmp_path, failed, "gloo", tasks, ["0"], board)
    assert err.rank == 1 and err.exception == "ProcessDied"
    assert str(err).startswith(
        "rank 1 of 2 failed over gloo in job 0 (schedule "
        "'ring_all_reduce') at step 1 of 2: ProcessDied: exited with "
        "code 70"
    )
    assert str(err).endswith("(rank(s) 0 failed too)")


def test_the_launcher_starts_the_worker_module_and_imports_neither_it_nor_the_sweep():
    # the worker's side lives in collectives/dist/worker.py, so that launch.py (which
    # sweep.py imports) does not import sweep.py back
    import ast
    import inspect

    from collectives.dist import launch, worker

    tree = ast.parse(inspect.getsource(launch))
    local = {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level
    }
    assert local == {"errors", "board"}
    assert "from collectives.dist.worker import worker_main" in inspect.getsource(launch)
    assert callable(worker.worker_main) and callable(worker.run_schedule_task)
