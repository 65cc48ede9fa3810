"""Benchmark: simulate a ring all-reduce of 256 ranks x 1 MiB float32 each.

``collectives.simulate`` is timed against plain numpy copies of the same total bytes it
moves (every transfer's chunk), measured in the same run, so that the ratios are
comparable across noisy machines. Three baselines, from the literal to the strictest:

* ``np.copy`` of one array of the total bytes moved (allocates its output, as simulate
  allocates its buffers): the issue's "plain numpy copy of the same bytes"; target <= 3x;
* ``np.copyto`` into a preallocated, already-touched array of that size (no page faults);
* one cache-resident copy of each step's bytes per step (what a perfect in-cache engine
  would cost; simulate's buffers are 256 MiB and cannot be cache-resident).

Run: ``make bench`` or ``.venv/bin/python bench/simulate.py``.
"""

import time

import numpy as np

import collectives as cl

N_RANKS = 256
BYTES_PER_RANK = 2**20
REPEATS = 5


def best_of(fn, repeats=REPEATS):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main():
    schedule = cl.algorithms.ring_all_reduce(N_RANKS)
    inputs = (
        np.random.default_rng(0).standard_normal((N_RANKS, BYTES_PER_RANK // 4)).astype(np.float32)
    )
    moved = schedule.n_transfers * (BYTES_PER_RANK // schedule.n_chunks)

    total = np.ones(moved // 4, dtype=np.float32)
    total_out = np.empty_like(total)
    np.copyto(total_out, total)  # touch every page once
    step = np.ones(moved // schedule.n_steps // 4, dtype=np.float32)
    step_out = np.empty_like(step)

    def per_step_copies():
        for _ in range(schedule.n_steps):
            np.copyto(step_out, step)

    t_sim = best_of(lambda: cl.simulate(schedule, inputs))
    t_copy = best_of(lambda: np.copy(total))
    t_copyto = best_of(lambda: np.copyto(total_out, total))
    t_cached = best_of(per_step_copies)
    print(
        f"ring all-reduce, {N_RANKS} ranks x {BYTES_PER_RANK / 2**20:g} MiB float32: "
        f"{schedule.n_steps} steps, {schedule.n_transfers} transfers, "
        f"{moved / 2**20:.0f} MiB moved"
    )
    print(f"simulate                                  {t_sim * 1e3:7.1f} ms")
    print(
        f"np.copy of {moved / 2**20:.0f} MiB                        {t_copy * 1e3:7.1f} ms"
        f"   ratio {t_sim / t_copy:.2f}x (target <= 3x)"
    )
    print(
        f"np.copyto into a touched {moved / 2**20:.0f} MiB array       {t_copyto * 1e3:7.1f} ms"
        f"   ratio {t_sim / t_copyto:.2f}x"
    )
    print(
        f"cache-resident copy of each step's bytes  {t_cached * 1e3:7.1f} ms"
        f"   ratio {t_sim / t_cached:.2f}x"
    )


if __name__ == "__main__":
    main()
