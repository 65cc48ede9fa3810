"""Benchmark: our ring all-reduce Schedule over gloo against gloo's own all_reduce.

Four local processes (one per rank, :mod:`collectives.dist`), float32 buffers of 16 MiB and
64 MiB. One process group runs ``ROUNDS`` rounds; each round times, at both sizes, the
Schedule (``cl.algorithms.ring_all_reduce(4)``: its point-to-point messages, step by step)
and ``torch.distributed.all_reduce`` (gloo's ring, gloo/allreduce.cc), each with one
checked, one warm-up and ``ITERS`` timed iterations (:func:`collectives.dist.sweep`'s
timing, nccl-tests' definitions: busbw = S/t x 2(n-1)/n). Which of the two goes first
alternates from round to round. The ratio busbw(ours) / busbw(gloo) is taken per round
(the same few seconds of the same machine, so other jobs slow both alike) and its median
over rounds is the figure; target >= 0.8. Every checked iteration must be exact (#wrong =
0, against the sum computed from first principles).

Run: ``make bench`` or ``.venv/bin/python bench/dist.py [rounds] [--segments S] [--table]``
(``--segments``: pieces per message, :func:`collectives.dist.run`'s option; ``--table``:
every round's nccl-tests line). About 25 s on an idle 2-core machine, under 3 minutes at a
load average of 10.
"""

import argparse
import os
import time

import numpy as np

import collectives as cl
from collectives.dist.launch import run_tasks
from collectives.dist.sweep import format_table, plan, summarise

MIB = 2**20
SIZES = (16 * MIB, 64 * MIB)
ITERS = 3
ROUNDS = 12
TARGET = 0.8


def _alternate(tasks, meta):
    """Swap the (Schedule, gloo) pair of every other round, so that neither always runs
    first."""
    tasks, meta = list(tasks), list(meta)
    for pair in range(0, len(tasks), 2):
        if (pair // (2 * len(SIZES))) % 2:
            tasks[pair], tasks[pair + 1] = tasks[pair + 1], tasks[pair]
            meta[pair], meta[pair + 1] = meta[pair + 1], meta[pair]
    return tasks, meta


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", nargs="?", type=int, default=ROUNDS)
    parser.add_argument("--segments", type=int, default=1)
    parser.add_argument("--table", action="store_true")
    args = parser.parse_args()
    schedule = cl.algorithms.ring_all_reduce(4)
    tasks, meta = plan(
        schedule, list(SIZES) * args.rounds, iters=ITERS, warmup=1, segments=args.segments
    )
    tasks, meta = _alternate(tasks, meta)
    load_before = os.getloadavg()
    start = time.perf_counter()
    results = run_tasks(schedule.n_ranks, tasks, "gloo", 1800.0)
    seconds = time.perf_counter() - start
    load_after = os.getloadavg()
    result = summarise(schedule, tasks, meta, [rows for rows, _ in results], "gloo")
    rows = result.rows
    if any(r.wrong for r in rows):
        raise SystemExit(f"wrong results: {[r for r in rows if r.wrong]}")
    if args.table:
        print(format_table(result), "\n")
    print(
        f"ring_all_reduce(4) Schedule (segments={args.segments}) vs gloo's all_reduce, "
        f"4 processes on {os.cpu_count()} CPUs, float32"
    )
    print(
        f"{args.rounds} rounds x (1 checked + 1 warm-up + {ITERS} timed iterations) per "
        f"implementation and size, {seconds:.0f} s; every checked result exact"
    )
    print(
        "load average (1, 5, 15 min) before: "
        + ", ".join(f"{x:.2f}" for x in load_before)
        + "; after: "
        + ", ".join(f"{x:.2f}" for x in load_after)
    )
    print(
        f"\n{'size':>8} {'ours busbw':>11} {'gloo busbw':>11} {'ratio':>6} "
        f"{'IQR':>10} {'min-max':>10}  ratio per round"
    )
    print(f"{'':>8} {'GB/s':>11} {'GB/s':>11} {'median':>6}")
    medians = []
    for size in SIZES:
        ours = np.array([r.busbw for r in rows if r.size == size and r.impl == schedule.name])
        gloo = np.array([r.busbw for r in rows if r.size == size and r.impl != schedule.name])
        ratios = ours / gloo
        q1, med, q3 = np.percentile(ratios, [25, 50, 75])
        medians.append(med)
        print(
            f"{size // MIB:>5} MiB {np.median(ours):>11.3f} {np.median(gloo):>11.3f} "
            f"{med:>6.2f} {q1:>4.2f}-{q3:<5.2f} {ratios.min():>4.2f}-{ratios.max():<5.2f} "
            + " ".join(f"{x:.2f}" for x in ratios)
        )
    verdict = "met" if min(medians) >= TARGET else "NOT met"
    print(
        f"\ntarget: median ratio >= {TARGET} at both sizes: {verdict}. The absolute GB/s "
        "are those of 4 ranks sharing the CPUs over loopback TCP; only the ratio is "
        "the figure."
    )


if __name__ == "__main__":
    main()
