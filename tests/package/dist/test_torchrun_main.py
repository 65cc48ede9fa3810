"""collectives/dist/torchrun_main.py: the same Schedule under torch's own launcher, and the
entry point's argument parsing."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from processes import children as _children
from processes import marked as _marked

pytest.importorskip("torch")
from collectives.dist.torchrun_main import parse_mesh, parse_size

ROOT = Path(__file__).resolve().parents[3]


def test_parse_size_and_mesh():
    assert [parse_size(t) for t in ("1024", "1K", "64M", "1G", "2kb")] == [
        1024,
        1024,
        64 * 2**20,
        2**30,
        2048,
    ]
    assert parse_mesh("dp=2,tp=4") == {"dp": 2, "tp": 4}
    import argparse

    for bad in ("", "0", "1X", "-1K"):
        with pytest.raises(argparse.ArgumentTypeError, match="size must look like"):
            parse_size(bad)
    with pytest.raises(argparse.ArgumentTypeError, match="mesh must look like dp=2,tp=4"):
        parse_mesh("dp:2")


def _env():
    return {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}


@pytest.mark.slow  # starts processes
def test_torchrun_main_outside_torchrun_says_how_to_start_it(tmp_path):
    env = {k: v for k, v in _env().items() if k not in ("RANK", "WORLD_SIZE")}
    proc = subprocess.run(
        [sys.executable, "-m", "collectives.dist.torchrun_main", "ring_all_reduce"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "RANK and WORLD_SIZE are not set: start this module with torchrun" in proc.stderr


@pytest.mark.slow
def test_the_same_schedule_runs_under_torchrun_on_four_processes(tmp_path, marked_env):
    """torch's own launcher, as on a cluster: --standalone --nproc-per-node 4, loopback."""
    before = _children()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node",
            "4",
            "-m",
            "collectives.dist.torchrun_main",
            "ring_all_reduce",
            "-b",
            "1K",
            "-e",
            "4K",
            "-n",
            "2",
            "-N",
            "2",
            "--mesh",
            "dp=2,tp=2",
            "--axis",
            "tp",
        ],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=tmp_path,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [line.split() for line in proc.stdout.splitlines() if not line.startswith("#")]
    assert proc.stdout.startswith(
        "# all_reduce over 2 ranks (4 processes, gloo), 2 "
        "iterations, 1 warm-up, median of 2 repeats"
    )
    assert [(row[0], row[-1]) for row in lines] == [
        (str(s), impl)
        for s in (1024, 2048, 4096)
        for impl in ("ring_all_reduce[tp]", "torch.distributed.all_reduce")
    ]
    # #wrong, then the fastest and slowest of the two passes, which bracket the median
    assert all(row[-4] == "0" for row in lines)
    assert all(float(row[-3]) <= float(row[4]) <= float(row[-2]) for row in lines)
    assert _children() <= before
    assert not _marked(marked_env)
