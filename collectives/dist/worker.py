"""What one worker process does: join the process group, run its tasks, report, exit.

:func:`collectives.dist.launch.run_tasks` starts one process per rank with
:func:`worker_main`, which reads the rank's share of the tasks from the launch directory,
joins the ``torch.distributed`` process group at the launcher's TCP store, and runs each task
in order: a Schedule's per-rank program with an :class:`~collectives.dist.torch_ops.Exchange`
(``kind="schedule"``, with its injected ``"fault"`` if any), one size of a timing sweep
(``kind="timed"``, :func:`collectives.dist.sweep.timed_task`), torch's own collective
(``kind="torch"``), or torch's own device mesh (``kind="mesh"``,
:func:`collectives.dist.torch_ops.mesh_groups_task`). Before every job and step it writes where
it is on the shared :class:`~collectives.dist.board.Board`; at the end it writes its results,
or its exception, to a file the launcher reads, and leaves with ``os._exit`` (no interpreter
teardown, no gloo destructors). torch is imported only inside :func:`worker_main`.
"""

import os
import pickle
import sys
import time as _time
import traceback
from pathlib import Path

from ..errors import CollectivesError, ScheduleError
from .board import Board
from .launch import LOOPBACK, write_pickle
from .programs import rank_program, run_rank
from .sweep import timed_task
from .torch_ops import P2P_OP, Exchange, mesh_groups_task, run_collective

__all__ = ["worker_main", "run_schedule_task"]


def run_schedule_task(task, rank, exchange, board, index):
    """One schedule task (job ``index``) on ``rank``, with its fault (if any) injected at its
    step: ``(the rank's working buffer at the end, P2P_OP)``."""
    fault = task.get("fault") or {}
    mine = fault.get("rank") == rank
    schedule = task["schedule"]

    def on_step(k):
        board.at(rank, index, k)
        if mine and fault.get("step") == k and fault.get("kind") == "die":
            os._exit(70)
        if mine and fault.get("step") == k and fault.get("kind") == "hang":
            _time.sleep(3600)

    def faulty(sends, recvs, row_shape, dtype, **how):
        k = int(board.rows[rank, 1])
        if mine and fault.get("step") == k and fault.get("kind") == "mismatch":
            import numpy as np

            sends = [(p, np.concatenate([rows, rows[:1]])) for p, rows in sends]
        return exchange(sends, recvs, row_shape, dtype, **how)

    exchange.n_segments = task.get("n_segments", 1)
    out = run_rank(
        schedule,
        rank,
        task["buffer"],
        task["filled"],
        faulty if mine else exchange,
        program=rank_program(schedule, rank),
        on_step=on_step,
    )
    return out, P2P_OP


def worker_main(workdir, rank):
    """Entry point of a worker process (started by
    :func:`~collectives.dist.launch.run_tasks`); never returns."""
    workdir = Path(workdir)
    task_index = None
    try:
        with open(workdir / f"job{rank}.pkl", "rb") as f:
            job = pickle.load(f)
        from datetime import timedelta

        import torch
        import torch.distributed as tdist

        torch.set_num_threads(1)
        backend, n = job["backend"], job["n"]
        timeout = timedelta(seconds=job["timeout"])
        device = torch.device("cpu")
        if backend == "nccl":
            torch.cuda.set_device(rank)
            device = torch.device("cuda", rank)
        store = tdist.TCPStore(LOOPBACK, job["port"], n, False, timeout)
        tdist.init_process_group(backend, store=store, rank=rank, world_size=n, timeout=timeout)
        barrier = {"device_ids": [rank]} if backend == "nccl" else {}
        tdist.barrier(**barrier)
        exchange = Exchange(torch, tdist, device)
        board = Board(workdir / "board.bin", n)
        results = []
        for task_index, task in enumerate(job["tasks"]):
            board.at(rank, task_index)
            if task["kind"] == "schedule":
                results.append(run_schedule_task(task, rank, exchange, board, task_index))
            elif task["kind"] == "timed":
                results.append(
                    timed_task(
                        task, rank, n, torch, tdist, device, backend, exchange, board, task_index
                    )
                )
            elif task["kind"] == "mesh":
                results.append(mesh_groups_task(task, rank, tdist))
            else:
                results.append(run_collective(task, n, torch, tdist, device, backend, rank))
        task_index = None
        board.finishing(rank)
        tdist.barrier(**barrier)  # nobody leaves while a peer still needs it
        write_pickle(workdir / f"out{rank}.pkl", results)
        tdist.destroy_process_group()
        code = 0
    except BaseException as e:  # report everything, including KeyboardInterrupt
        key = None
        if isinstance(e, ScheduleError) and e.step is not None:
            key = (e.step, getattr(e, "transfer_index", 0))
        try:
            write_pickle(
                workdir / f"error{rank}.pkl",
                {
                    "type": type(e).__name__,
                    "message": str(e),
                    "task": task_index,
                    "primary": isinstance(e, CollectivesError),
                    "key": key,
                    "traceback": traceback.format_exc(),
                },
            )
        finally:
            code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # skip interpreter teardown (and gloo's destructors)
