"""Run a Schedule under ``torchrun``: the same per-rank program on any number of machines.

``torchrun`` (``python -m torch.distributed.run``) starts the processes and sets ``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT``; this module joins the
process group from them (``init_method="env://"``), builds a catalogue algorithm
(:data:`collectives.algorithms.CATALOG`) for ``WORLD_SIZE`` ranks, or for the groups of one
axis of a mesh, and runs the sweep of :mod:`collectives.dist.sweep` (``-w`` warm-up and
``-n`` timed iterations per size, then one checked, beside torch's own collective; ``-N`` passes
over the sizes, summarised by their median). Rank 0 prints the table in nccl-tests' format.
One machine, four processes::

    python -m torch.distributed.run --standalone --nproc-per-node 4 \\
        -m collectives.dist.torchrun_main ring_all_reduce -b 1K -e 64M -f 2

Two machines with eight GPUs each (run on both; NCCL is chosen when CUDA is available)::

    python -m torch.distributed.run --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d \\
        --rdzv-endpoint HOST:29500 -m collectives.dist.torchrun_main ring_all_reduce

The exit status is 0 when every result is right, 1 when some element is wrong (the table
says where), 2 on bad arguments. Left out: nccl-tests' in-place variants and its ``-a``
choices (times are averaged over ranks, as its default).
"""

import argparse
import os
import sys

__all__ = ["main", "parse_size", "parse_mesh"]

_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def parse_size(text):
    """``"64M"`` -> 67108864: nccl-tests' size syntax (K, M, G are powers of 1024)."""
    t = str(text).strip().upper().removesuffix("B")
    unit = t[-1:] if t[-1:] in _UNITS else ""
    number = t[:-1] if unit else t
    if not number.isdigit() or int(number) < 1:
        raise argparse.ArgumentTypeError(f"size must look like 1024, 1K, 64M or 1G, got {text!r}")
    return int(number) * _UNITS[unit]


def parse_mesh(text):
    """``"dp=2,tp=4"`` -> ``{"dp": 2, "tp": 4}``."""
    axes = {}
    for part in str(text).split(","):
        name, _, size = part.partition("=")
        if not name.strip() or not size.strip().isdigit():
            raise argparse.ArgumentTypeError(f"mesh must look like dp=2,tp=4, got {text!r}")
        axes[name.strip()] = int(size)
    return axes


def _arguments(argv):
    from ..algorithms import CATALOG

    p = argparse.ArgumentParser(
        prog="python -m collectives.dist.torchrun_main",
        description="Run a collectives Schedule under torchrun and print an nccl-tests-style "
        "table (rank 0).",
    )
    p.add_argument(
        "algorithm",
        choices=sorted(CATALOG),
        metavar="ALGORITHM",
        help="a catalogue algorithm, e.g. ring_all_reduce",
    )
    p.add_argument("-b", "--minbytes", type=parse_size, default=parse_size("1K"))
    p.add_argument("-e", "--maxbytes", type=parse_size, default=parse_size("64M"))
    p.add_argument("-f", "--stepfactor", type=int, default=2)
    p.add_argument("-n", "--iters", type=int, default=20)
    p.add_argument("-w", "--warmup_iters", type=int, default=1)
    p.add_argument(
        "-N",
        "--run_cycles",
        type=int,
        default=1,
        help="passes over all the sizes; the table gives each size's median "
        "time and its range (nccl-tests' -N prints every cycle instead)",
    )
    p.add_argument("-d", "--datatype", default="float32")
    p.add_argument("--backend", default="auto", choices=("auto", "gloo", "nccl"))
    p.add_argument(
        "--mesh",
        type=parse_mesh,
        default=None,
        help="axes of a mesh over WORLD_SIZE ranks, e.g. dp=2,tp=2",
    )
    p.add_argument("--axis", default=None, help="run the collective inside this mesh axis")
    p.add_argument(
        "--no-torch", action="store_true", help="time the Schedule only, not torch's own collective"
    )
    return p, p.parse_args(argv)


def _schedule(parser, args, world):
    from ..algorithms import CATALOG
    from ..errors import CollectivesError
    from ..mesh import Mesh

    build = CATALOG[args.algorithm].build
    try:
        if args.mesh is None:
            if args.axis is not None:
                parser.error("--axis needs --mesh")
            return build(world)
        mesh = Mesh(args.mesh)
        if mesh.n_ranks != world:
            parser.error(f"--mesh has {mesh.n_ranks} positions but WORLD_SIZE is {world}")
        if args.axis is None:
            parser.error("--mesh needs --axis (the axis whose groups run the collective)")
        return mesh.collective(build(mesh.axis_size(args.axis)), args.axis)
    except CollectivesError as e:
        parser.error(str(e))


def main(argv=None):
    """Entry point of one rank under torchrun; returns the exit status."""
    from datetime import timedelta

    import torch
    import torch.distributed as tdist

    from ..errors import CollectivesError
    from .launch import resolve_backend
    from .sweep import format_table, plan, sizes, summarise, timed_task
    from .torch_ops import Exchange

    parser, args = _arguments(argv)
    if "RANK" not in os.environ or "WORLD_SIZE" not in os.environ:
        parser.error(
            "RANK and WORLD_SIZE are not set: start this module with torchrun "
            "(python -m torch.distributed.run ... -m collectives.dist.torchrun_main)"
        )
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    schedule = _schedule(parser, args, world)
    try:
        tasks, meta = plan(
            schedule,
            sizes(args.minbytes, args.maxbytes, args.stepfactor),
            dtype=args.datatype,
            iters=args.iters,
            warmup=args.warmup_iters,
            torch=not args.no_torch,
            repeats=args.run_cycles,
        )
    except CollectivesError as e:
        parser.error(str(e))
    backend = resolve_backend(args.backend, 1)  # one GPU per process on each machine
    device = torch.device("cpu")
    if backend == "nccl":
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
    torch.set_num_threads(1)
    tdist.init_process_group(backend, init_method="env://", timeout=timedelta(seconds=300))
    exchange = Exchange(torch, tdist, device)

    class _NoBoard:
        def at(self, *a):
            pass

    results = []
    for i, task in enumerate(tasks):
        mine = timed_task(
            task, rank, world, torch, tdist, device, backend, exchange, _NoBoard(), i
        )[0]
        gathered = [None] * world if rank == 0 else None
        tdist.gather_object(mine, gathered, dst=0)
        results.append(gathered)
    status = 0
    if rank == 0:
        result = summarise(schedule, tasks, meta, results, backend)
        print(format_table(result), flush=True)
        status = 1 if any(r.wrong for r in result.rows) else 0
    tdist.barrier()
    tdist.destroy_process_group()
    return status


if __name__ == "__main__":
    sys.exit(main())
