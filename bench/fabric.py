"""The flow model at cluster scale: Meta-style RoCE clusters (`cl.fabric.meta_cluster`:
racks of 16 GPUs, zones of 252 racks, 1 to 8 zones = 4,032 to 32,256 GPUs).

For each size: seconds to build the fabric; then for one step of a ring all-reduce
(r -> r+1) and one step of a pairwise all-to-all (r -> r + one zone, so every flow crosses
the aggregation tier; every step of that all-to-all is such a shift), each connection
split over 16 queue pairs hashed with enhanced ECMP: seconds to route the flows, seconds to
solve max-min fair rates, the step time they give, and the peak memory (tracemalloc) of
route + solve. The baseline, measured in the same run on the same flows, is the step
model of `cl.time` (route, then bytes per link / bandwidth); the ratio says what the
max-min solve costs on top. Target: under 10 s for 32k GPUs.
"""

import time as clock
import tracemalloc

import numpy as np

from collectives import fabric

QPS = 16
NBYTES = 2**30 / 32256  # bytes per connection in one ring step of a 1 GiB buffer


def case(topo, dst):
    src = np.arange(topo.n_ranks)
    tracemalloc.start()
    t0 = clock.perf_counter()
    flows = fabric.route_flows(topo, src, dst, NBYTES, qps=QPS, hash_qp=True)
    t1 = clock.perf_counter()
    rates = fabric.max_min_rates(flows)
    t2 = clock.perf_counter()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    step = float(np.max(flows.nbytes / rates))
    # baseline: the step model, busiest link's bytes over its bandwidth
    b0 = clock.perf_counter()
    pair, link = topo.paths(flows.src, flows.dst, flow_id=flows.qp)
    loads = np.bincount(link, weights=flows.nbytes[pair], minlength=topo.n_links)
    base_step = float(np.max(loads / topo.link_bandwidth))
    b1 = clock.perf_counter()
    return flows.n_flows, t1 - t0, t2 - t1, peak, step, base_step, b1 - b0


def main():
    print(
        f"{'GPUs':>6} {'pattern':<11} {'build s':>8} {'flows':>8} {'route s':>8} "
        f"{'solve s':>8} {'total s':>8} {'peak MB':>8} {'step us':>8} {'model us':>8} "
        f"{'baseline s':>10} {'ratio':>6}"
    )
    first = None
    for zones in (1, 2, 4, 8):
        t0 = clock.perf_counter()
        # the 32k what-if layout (zones of 252 racks), as this bench always measured
        topo = fabric.meta_cluster(zones=zones, racks_per_zone=252, aggregators=18)
        build = clock.perf_counter() - t0
        n = topo.n_ranks
        src = np.arange(n)
        patterns = [("ring", (src + 1) % n)]
        if zones > 1:
            patterns.append(("all-to-all", (src + n // zones) % n))
        for name, dst in patterns:
            flows, route, solve, peak, step, base_step, base = case(topo, dst)
            total = build + route + solve
            print(
                f"{n:>6} {name:<11} {build:>8.2f} {flows:>8} {route:>8.2f} {solve:>8.2f} "
                f"{total:>8.2f} {peak / 1e6:>8.0f} {step * 1e6:>8.1f} "
                f"{base_step * 1e6:>8.1f} {base:>10.2f} {(route + solve) / base:>6.1f}"
            )
            if name == "ring":
                if first is None:
                    first = (n, route + solve)
                else:
                    print(
                        f"{'':>6} growth of ring route+solve vs {first[0]} GPUs: "
                        f"{(route + solve) / first[1]:.1f}x for {n / first[0]:.0f}x GPUs"
                    )


if __name__ == "__main__":
    main()
