"""Benchmark: build, verify and cost every catalogue algorithm at 256 and 1024 ranks.

For each algorithm it prints the transfers and the seconds per million transfers of
building the Schedule, ``verify`` and ``time`` (on the topology the algorithm is designed
for), at both sizes, and the ratio of the per-transfer costs (1024 / 256): a ratio near 1
means the cost is linear in the number of transfers. Algorithms whose schedule would exceed
MAX_TRANSFERS at a size (relays whose transfer count grows as n^3) are reported, not run.
Run: ``.venv/bin/python bench/algorithms.py [name ...]``.
"""

import sys
import time as clock

import collectives as cl
from collectives.algorithms import CATALOG, square_shape, supports

SIZES = (256, 1024)
MAX_TRANSFERS = 40_000_000
B, H = 45e9, 1e-6


def topology_for(algorithm, n):
    kind = algorithm.topology
    if kind == "ring":
        return cl.topology.ring(n, B, H)
    if kind == "chain":
        return cl.topology.chain(n, B, H)
    if kind == "torus":
        return cl.topology.torus(square_shape(n), B, H)
    return cl.topology.switch(n, B, H)


def predicted_transfers(name, n):
    """Transfer counts of the n^3 relays, without building them."""
    if name in ("ring_all_to_all", "chain_all_to_all"):
        return n * n * (n - 1) // 2
    if name == "bidirectional_ring_all_to_all":
        return n * n * n // 4
    if name == "chain_farthest_first_all_to_all":  # every hop of every part
        return (n**3 - n) // 3
    return 0


def measure(name, n):
    algorithm = CATALOG[name]
    t0 = clock.perf_counter()
    schedule = algorithm.build(n)
    t1 = clock.perf_counter()
    cl.verify(schedule)
    t2 = clock.perf_counter()
    cl.time(schedule, topology_for(algorithm, n), 2**26)
    t3 = clock.perf_counter()
    return schedule.n_transfers, t1 - t0, t2 - t1, t3 - t2


def main(names):
    print(
        f"{'algorithm':36s} {'n':>5s} {'transfers':>11s} {'build':>8s} {'verify':>8s} "
        f"{'time':>8s}   (seconds per million transfers)"
    )
    ratios = []
    for name in names:
        per = {}
        for n in SIZES:
            if not supports(name, n):
                continue
            if predicted_transfers(name, n) > MAX_TRANSFERS:
                print(
                    f"{name:36s} {n:5d} {predicted_transfers(name, n):11,d}   skipped "
                    f"(more than {MAX_TRANSFERS:,} transfers)"
                )
                continue
            count, build, verify, cost = measure(name, n)
            m = max(count, 1) / 1e6
            per[n] = (build + verify + cost) / m
            print(
                f"{name:36s} {n:5d} {count:11,d} {build / m:8.3f} {verify / m:8.3f} {cost / m:8.3f}"
            )
        if len(per) == 2:
            ratio = per[SIZES[1]] / per[SIZES[0]]
            ratios.append(ratio)
            print(f"{'':36s} per-transfer cost, {SIZES[1]} / {SIZES[0]} ranks: {ratio:.2f}x")
    if ratios:
        ratios.sort()
        print(
            f"\nper-transfer cost ratio {SIZES[1]}/{SIZES[0]} over {len(ratios)} algorithms: "
            f"median {ratios[len(ratios) // 2]:.2f}x, max {ratios[-1]:.2f}x"
        )


if __name__ == "__main__":
    main(sys.argv[1:] or sorted(CATALOG))
