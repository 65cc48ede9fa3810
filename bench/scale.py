"""Costing at cluster scale: `cl.time` of a ring all-reduce at 1k, 4k and 32k ranks, of the
torus all-gather and all-reduce on a full TPU v5p pod (16x20x28 = 8,960 chips), and of a flat
ring, a hierarchical all-reduce (plain and pipelined) and NCCL's ring and tree on DGX
SuperPODs of 1,024 and 32,768 GPUs (the hardware presets).

For each case: seconds to build the Schedule, seconds for `cl.time`, the peak memory of both
(tracemalloc), the number of transfers the schedule stands for, and the growth of the time
with n against the 1k case measured in the same run (targets: under 2 s and 2 GB each).
The baseline is the explicit costing of the same ring at 1k ranks (its transfers listed,
the Schedule rebuilt from them), measured in the same run.
"""

import time as clock
import tracemalloc

import collectives as cl


def measure(build, topology, nbytes):
    tracemalloc.start()
    t0 = clock.perf_counter()
    schedule = build()
    t1 = clock.perf_counter()
    timing = cl.time(schedule, topology, nbytes)
    t2 = clock.perf_counter()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return schedule, timing, t1 - t0, t2 - t1, peak


def main():
    nbytes = 2**30
    rows = []
    for n in (1024, 4096, 32768):
        topo = cl.topology.ring(n, 45e9, hop_latency=1e-6)
        rows.append(
            (
                f"ring_all_reduce, ring of {n}",
                n,
                *measure(lambda n=n: cl.algorithms.ring_all_reduce(n), topo, nbytes),
            )
        )
    pod = cl.hardware.preset("tpu-v5p")
    rows.append(
        (
            "torus_all_gather, v5p pod 16x20x28",
            pod.n_ranks,
            *measure(lambda: cl.algorithms.torus_all_gather((16, 20, 28)), pod, nbytes),
        )
    )
    rows.append(
        (
            "torus_all_reduce, v5p pod 16x20x28",
            pod.n_ranks,
            *measure(lambda: cl.algorithms.torus_all_reduce((16, 20, 28)), pod, nbytes),
        )
    )
    pods = cl.hardware.preset("tpu-v5p", slices=2)
    rows.append(
        (
            "multislice all-reduce, 2 v5p pods",
            pods.n_ranks,
            *measure(lambda: cl.algorithms.multislice_all_reduce((16, 20, 28), 2), pods, nbytes),
        )
    )
    # DGX SuperPODs (cl.hardware "superpod-h100": DGX H100 nodes, 32 per scalable unit, rail
    # leaves, spines and, beyond 8 units, cores, with the reference architecture's counts):
    # 4 units = 1,024 GPUs (the RA's reference design), 128 units = 32,768 GPUs
    for units in (4, 128):
        gpus = cl.hardware.preset("superpod-h100", units=units)
        n_nodes = gpus.shape[0]
        n = 8 * n_nodes
        rows.append(
            (
                f"ring_all_reduce, SuperPOD {n} GPUs",
                n,
                *measure(lambda n=n: cl.algorithms.ring_all_reduce(n), gpus, nbytes),
            )
        )
        rows.append(
            (
                f"two_level_ring_all_reduce, {n} GPUs",
                n,
                *measure(
                    lambda n_nodes=n_nodes: cl.algorithms.two_level_ring_all_reduce(n_nodes, 8),
                    gpus,
                    nbytes,
                ),
            )
        )
        if units == 4:
            # pipelining overlaps the levels once the segments outnumber the outer ring's
            # 2(N-1) = 254 steps; at 32k GPUs the outer ring has 8,190 steps, out of reach
            rows.append(
                (
                    "  the same, pipelined in 1,024 segments",
                    n,
                    *measure(
                        lambda n_nodes=n_nodes: cl.transforms.pipelined(
                            cl.algorithms.two_level_ring_all_reduce(n_nodes, 8), 1024
                        ),
                        gpus,
                        nbytes,
                    ),
                )
            )
        nccl = cl.hardware.preset("superpod-h100", units=units, pxn=True)
        rows.append(
            (
                "nccl_ring_all_reduce, 8 channels, PXN",
                n,
                *measure(
                    lambda n_nodes=n_nodes: cl.algorithms.nccl_ring_all_reduce(
                        n_nodes, 8, n_channels=8
                    ),
                    nccl,
                    nbytes,
                ),
            )
        )
        if units == 4:
            # NCCL's Tree is listed transfer by transfer (4 (N g - 1) x chunks x channels);
            # at 32k GPUs with 64 chunks that is 16.8M transfers and about 20 s, so only 1k
            rows.append(
                (
                    "nccl_tree_all_reduce, 64 chunks, 2 ch.",
                    n,
                    *measure(
                        lambda n_nodes=n_nodes: cl.algorithms.nccl_tree_all_reduce(
                            n_nodes, 8, n_chunks=64, n_channels=2
                        ),
                        nccl,
                        nbytes,
                    ),
                )
            )

    # baseline: the 1k ring costed from its listed transfers (the pre-Traffic way)
    ring_1k = cl.algorithms.ring_all_reduce(1024)
    listed = cl.Schedule.from_arrays(
        "all_reduce",
        1024,
        ring_1k.n_chunks,
        ring_1k.step_of_transfer,
        ring_1k.src,
        ring_1k.dst,
        ring_1k.src_chunk,
        ring_1k.dst_chunk,
        ring_1k.reduce,
        n_steps=ring_1k.n_steps,
    )
    topo = cl.topology.ring(1024, 45e9, hop_latency=1e-6)
    t0 = clock.perf_counter()
    explicit = cl.time(listed, topo, nbytes)
    explicit_s = clock.perf_counter() - t0

    base = rows[0][5]
    print(
        f"{'case':40s} {'ranks':>6s} {'transfers':>14s} {'build s':>8s} {'time s':>8s} "
        f"{'peak MB':>8s} {'time/1k':>8s}  modelled seconds (bottleneck level)"
    )
    for name, n, schedule, timing, build_s, time_s, peak in rows:
        print(
            f"{name:40s} {n:6d} {schedule.n_transfers:14,d} {build_s:8.3f} {time_s:8.3f} "
            f"{peak / 1e6:8.1f} {time_s / base:8.2f}x  {timing.seconds:.4g} "
            f"({timing.bottleneck_level})"
        )
    print(
        f"\nbaseline: the 1k ring costed from its {listed.n_transfers:,} listed transfers: "
        f"{explicit_s:.3f} s; from its traffic: {base:.3f} s ({explicit_s / base:.0f}x "
        f"faster); equal results: {explicit.seconds == rows[0][3].seconds}"
    )


if __name__ == "__main__":
    main()
