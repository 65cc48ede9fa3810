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

from . import (
    algorithms,
    analytic,
    dist,
    fabric,
    fp8,
    grading,
    hardware,
    measures,
    mesh,
    moe,
    plan,
    semantics,
    topology,
    transforms,
    viz,
)
from .cost import ConcurrentTiming, Job, Timing, algbw, bus_factor, busbw, time, time_concurrent
from .errors import (
    CollectivesError,
    DistError,
    GradingError,
    LayoutError,
    SandboxError,
    ScheduleError,
    TopologyError,
)
from .mesh import Mesh
from .replay import SymbolicState, simulate, trace, verify
from .schedule import Schedule, Step, Transfer, compose
from .topology import Topology
from .traffic import Traffic
from .transforms import grouped

# every name imported above (tests/package/test_init.py checks that none is missing)
__all__ = [
    # subpackages and modules (cl.measures: hops, diameter, average hops, bisection bandwidth)
    "algorithms",
    "analytic",
    "dist",
    "fabric",
    "fp8",
    "grading",
    "hardware",
    "measures",
    "mesh",
    "moe",
    "plan",
    "semantics",
    "topology",
    "transforms",
    "viz",
    # the Schedule and what runs it
    "Schedule",
    "Step",
    "Transfer",
    "compose",
    "grouped",
    "Traffic",
    "simulate",
    "verify",
    "trace",
    "SymbolicState",
    # topologies, meshes and time
    "Topology",
    "Mesh",
    "Timing",
    "time",
    "Job",
    "ConcurrentTiming",
    "time_concurrent",
    "algbw",
    "busbw",
    "bus_factor",
    # the one error hierarchy
    "CollectivesError",
    "ScheduleError",
    "TopologyError",
    "GradingError",
    "DistError",
    "LayoutError",
    "SandboxError",
]

__version__ = "0.1.0"
