"""Benchmark: our ring all-reduce Schedule over gloo against gloo's own all_reduce.

Four local processes (one per rank, :mod:`collectives.dist`), float32 buffers of 16 MiB and
64 MiB. Each round runs, in one process group, the Schedule (point-to-point messages,
``batch_isend_irecv``) then ``torch.distributed.all_reduce`` at both sizes, each with one
checked, one warm-up and ``ITERS`` timed iterations (:func:`collectives.dist.sweep`, the
nccl-tests definitions: busbw = S/t x 2(n-1)/n). The ratio busbw(ours) / busbw(gloo) is
taken per round (the same minute of the same machine) and the median over rounds is
reported; target >= 0.8. Every checked iteration must be exact (#wrong = 0).

Run: ``make bench`` or ``.venv/bin/python bench/dist.py [rounds]``.
"""

import sys
import time

import numpy as np

import collectives as cl
from collectives import dist

MIB = 2**20
SIZES = (16 * MIB, 64 * MIB)
ITERS = 5
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 3


def main():
    schedule = cl.algorithms.ring_all_reduce(4)
    start = time.perf_counter()
    result = dist.sweep(schedule, list(SIZES) * ROUNDS, iters=ITERS, warmup=1,
                        timeout=1800, progress=False)
    seconds = time.perf_counter() - start
    rows = result.rows
    assert all(r.wrong == 0 for r in rows), [r for r in rows if r.wrong]
    print(dist.format_table(result))
    print(f"\n{ROUNDS} rounds, {ITERS} timed iterations each, {seconds:.0f} s in all")
    print(f"{'size':>8} {'ours busbw GB/s':>16} {'gloo busbw GB/s':>16} {'ratio':>6}  per round")
    for size in SIZES:
        ours = np.array([r.busbw for r in rows if r.size == size and r.impl == schedule.name])
        gloo = np.array([r.busbw for r in rows if r.size == size and r.impl != schedule.name])
        ratios = ours / gloo
        print(f"{size // MIB:>5} MiB {np.median(ours):>16.3f} {np.median(gloo):>16.3f} "
              f"{np.median(ratios):>6.2f}  {' '.join(f'{x:.2f}' for x in ratios)}")


if __name__ == "__main__":
    main()
