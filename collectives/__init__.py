"""``collectives``: the reference package of the course on collective communication.

One object in the middle: a :class:`Schedule` (a collective as synchronous steps of chunk
transfers). ``simulate`` runs it on numbers, ``verify`` checks it symbolically, ``time``
costs it on a :class:`Topology`, ``viz`` draws it. Quick tour::

    import collectives as cl
    s = cl.algorithms.ring_all_gather(8)
    cl.verify(s)
    t = cl.time(s, cl.topology.ring(8, 45e9, hop_latency=1e-6), nbytes=2**20)
    print(t.seconds, cl.busbw("all_gather", 2**20, t.seconds, 8))
"""

from . import (algorithms, analytic, dist, fabric, fp8, grading, hardware, mesh, moe, plan,
               semantics, topology, transforms, viz)
from .cost import ConcurrentTiming, Job, Timing, algbw, bus_factor, busbw, time, time_concurrent
from .errors import CollectivesError, GradingError, ScheduleError, TopologyError
from .schedule import Schedule, Step, Transfer, compose
from .replay import SymbolicState, simulate, trace, verify
from .topology import Topology
from .traffic import Traffic
from .transforms import grouped
from .mesh import Mesh
from . import measures  # cl.measures: hops, diameter, average hops, bisection bandwidth

__all__ = [
    "algorithms", "analytic", "dist", "fabric", "fp8", "grading", "hardware", "mesh", "moe",
    "plan", "semantics", "topology", "transforms", "viz",
    "Schedule", "Step", "Transfer", "compose",
    "simulate", "verify", "trace", "SymbolicState",
    "Topology", "Mesh", "Timing", "time", "algbw", "busbw", "bus_factor",
    "CollectivesError", "ScheduleError", "TopologyError", "GradingError",
]

__version__ = "0.1.0"
