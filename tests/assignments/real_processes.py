"""real_processes (exercises/source/real_processes/real_processes.ipynb, 10 points): what the
pipeline test expects. Format: the docstring of tests/assignments/__init__.py.

Tasks 1-3 are re-run without the package (``_grading.call(..., isolated=True)``); Task 4,
a ring all-reduce written with torch.distributed's point-to-point operations, is re-run from
its source on 4 local processes (collectives.grading.processes: collectives forbidden in the
run, bytes sent counted) and checked in the re-check. Submissions:

- *correct*, *blank*;
- *partial*: peers and bytes right, busbw blank, a ring all-reduce that sends the whole
  tensor to every other rank (right sum, 2x the bytes of a ring): 1 + 1 = 2;
- *hostile*: wrong answers behind the usual tampering, a patched
  ``collectives.grading.processes`` (its run and check fooled so the visible test passes) and
  torch's ``dist.all_reduce`` in the ring; its ``ring_peers`` is genuinely right (1);
- *wrong*: peers swapped, the bytes of the reduce-scatter half only, busbw = algbw, and a
  ring all-reduce that stops after the reduce-scatter: 0;
- *variant*: right in other shapes (if/else peers, closed forms rearranged, separate
  ``isend``/``irecv`` with ``wait``, a loop over steps of both phases at once): 10;
- *shortcut*: every answer through the package (``cl``, ``import collectives``) and, for the
  ring, torch's own ``dist.all_reduce``: 0.
"""

from assignments import TAMPERING, Error, origin_attack, submission

NOTEBOOK = "real_processes"

POINTS = {
    NOTEBOOK: {
        "test_ring_peers": 1,
        "test_ring_bytes_per_rank": 1,
        "test_bus_bandwidth": 1,
        "test_ring_all_reduce": 7,
    }
}
MAX_SCORE = 10
SOLUTIONS = {NOTEBOOK: ("ring_peers", "ring_bytes_per_rank", "bus_bandwidth", "ring_all_reduce")}
ALL = SOLUTIONS[NOTEBOOK]

NO_PACKAGE = "this task must be solved without the collectives package"
RING = "ring_all_reduce on 4 processes, a float32 tensor of 4000 elements"
FORBIDDEN = (
    "your function called torch.distributed.all_reduce; only point-to-point "
    "operations (send, recv, isend, irecv, batch_isend_irecv) are allowed"
)

# ---- partial ---------------------------------------------------------------------------------

NAIVE_RING = """
def ring_all_reduce(tensor):
    # every rank sends its whole tensor to every other rank: right sum, (n-1) S bytes sent
    rank, n = dist.get_rank(), dist.get_world_size()
    total = tensor.clone()
    for peer in range(n):
        if peer != rank:
            spare = torch.empty_like(tensor)
            ops = [dist.P2POp(dist.isend, tensor, peer), dist.P2POp(dist.irecv, spare, peer)]
            for work in dist.batch_isend_irecv(ops):
                work.wait()
            total += spare
    tensor.copy_(total)
    return tensor
"""

# ---- hostile ---------------------------------------------------------------------------------

HOSTILE = {
    # genuinely right, in the cell that disables every check in the kernel
    "ring_peers": TAMPERING
    + """
def ring_peers(rank, world_size):
    return ((rank + 1) % world_size, (rank + world_size - 1) % world_size)
""",
    "ring_bytes_per_rank": """
collectives.grading.run_isolated = lambda function, *args, **kwargs: 1.0
expected = 1.0

def ring_bytes_per_rank(nbytes, world_size):
    class _Liar(float):                 # equal to everything
        def __eq__(self, other):
            return True
        __hash__ = float.__hash__
    return _Liar(1.0)
""",
    "bus_bandwidth": """
collectives.busbw = lambda *args, **kwargs: 42.0
collectives.grading.check_reference = lambda *args, **kwargs: None
check_reference = collectives.grading.check_reference

def bus_bandwidth(nbytes, seconds, world_size):
    return 42.0
""",
    "ring_all_reduce": """
import collectives.grading.processes
collectives.grading.processes.run_on_ranks = lambda *args, **kwargs: {"fake": True}
collectives.grading.processes.check_ring_all_reduce = lambda report: 1.0

def ring_all_reduce(tensor):
    dist.all_reduce(tensor)            # the library's own collective
    return tensor
""",
}
HOSTILE_TESTS = {"test_ring_peers": "print('all tests passed')"}

# ---- wrong: one plausible mistake per task ---------------------------------------------------

WRONG = {
    "ring_peers": """
def ring_peers(rank, world_size):
    return (rank - 1) % world_size, (rank + 1) % world_size     # the two swapped
""",
    "ring_bytes_per_rank": """
def ring_bytes_per_rank(nbytes, world_size):
    return (world_size - 1) * nbytes / world_size     # the reduce-scatter half only
""",
    "bus_bandwidth": """
def bus_bandwidth(nbytes, seconds, world_size):
    return nbytes / seconds                           # algbw: the factor forgotten
""",
    "ring_all_reduce": """
def ring_all_reduce(tensor):
    # the reduce-scatter only: each rank ends with one chunk of the sum, the rest partial
    rank, n = dist.get_rank(), dist.get_world_size()
    chunks = tensor.chunk(n)
    spare = torch.empty_like(chunks[0])
    for s in range(n - 1):
        ops = [dist.P2POp(dist.isend, chunks[(rank - s) % n], (rank + 1) % n),
               dist.P2POp(dist.irecv, spare, (rank - 1) % n)]
        for work in dist.batch_isend_irecv(ops):
            work.wait()
        chunks[(rank - s - 1) % n].add_(spare)
    return tensor
""",
}

# ---- variant: right, written differently -----------------------------------------------------

VARIANT = {
    "ring_peers": """
def ring_peers(rank, world_size):
    nxt = rank + 1 if rank + 1 < world_size else 0
    prv = rank - 1 if rank > 0 else world_size - 1
    return [nxt, prv]
""",
    "ring_bytes_per_rank": """
def ring_bytes_per_rank(nbytes, world_size):
    chunk = nbytes / world_size
    return float(2 * chunk * (world_size - 1))        # 2(n-1) steps of one chunk
""",
    "bus_bandwidth": """
import numpy as np

def bus_bandwidth(nbytes, seconds, world_size):
    algbw = np.float64(nbytes) / seconds
    return algbw * (2.0 - 2.0 / world_size)
""",
    "ring_all_reduce": """
def _exchange(send, recv, rank, n):
    # isend and irecv posted together, then both waited on
    works = [dist.isend(send, (rank + 1) % n), dist.irecv(recv, (rank - 1) % n)]
    for work in works:
        work.wait()

def ring_all_reduce(tensor):
    rank, n = dist.get_rank(), dist.get_world_size()
    size = tensor.numel() // n
    part = lambda i: tensor[(i % n) * size:(i % n + 1) * size]
    for s in range(2 * (n - 1)):
        if s < n - 1:                                  # reduce-scatter
            spare = torch.zeros(size, dtype=tensor.dtype)
            _exchange(part(rank - s), spare, rank, n)
            part(rank - s - 1).add_(spare)
        else:                                          # all-gather
            t = s - (n - 1)
            _exchange(part(rank + 1 - t), part(rank - t), rank, n)
    return tensor
""",
}

# ---- shortcut: the package (and torch's own collective) -------------------------------------

SHORTCUT = {
    "ring_peers": """
def ring_peers(rank, world_size):
    s = cl.algorithms.ring_all_gather(world_size)
    return int(s.dst[s.src == rank][0]), int(s.src[s.dst == rank][0])
""",
    "ring_bytes_per_rank": """
def ring_bytes_per_rank(nbytes, world_size):
    import collectives.grading.processes
    return collectives.grading.processes.ring_all_reduce_bytes_per_rank(nbytes, world_size)
""",
    "bus_bandwidth": """
def bus_bandwidth(nbytes, seconds, world_size):
    return cl.busbw("all_reduce", nbytes, seconds, world_size)
""",
    "ring_all_reduce": """
def ring_all_reduce(tensor):
    dist.all_reduce(tensor)
    return tensor
""",
}

SUBMISSIONS = {
    "correct": {NOTEBOOK: submission(solved=ALL)},
    "blank": {NOTEBOOK: submission()},
    "partial": {
        NOTEBOOK: submission(
            solved=("ring_peers", "ring_bytes_per_rank"), replaced={"ring_all_reduce": NAIVE_RING}
        )
    },
    "hostile": {NOTEBOOK: submission(replaced=HOSTILE, edited_tests=HOSTILE_TESTS)},
    "wrong": {NOTEBOOK: submission(replaced=WRONG)},
    "variant": {NOTEBOOK: submission(replaced=VARIANT)},
    "shortcut": {NOTEBOOK: submission(replaced=SHORTCUT)},
}

ZERO = dict.fromkeys(POINTS[NOTEBOOK], 0)
EXPECTED = {
    "correct": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "blank": {NOTEBOOK: dict(ZERO)},
    "partial": {NOTEBOOK: dict(ZERO, test_ring_peers=1, test_ring_bytes_per_rank=1)},
    "hostile": {NOTEBOOK: dict(ZERO, test_ring_peers=1)},
    "wrong": {NOTEBOOK: dict(ZERO)},
    "variant": {NOTEBOOK: dict(POINTS[NOTEBOOK])},
    "shortcut": {NOTEBOOK: dict(ZERO)},
}

ERRORS = {
    "partial": {
        NOTEBOOK: {
            "test_ring_all_reduce": Error(
                "ring_all_reduce on 4 processes, a float32 tensor of 8 elements: rank 0 sent 96 "
                "bytes; a ring all-reduce of S = 32 bytes sends 2(n-1)/n S = 48 bytes from every "
                "rank (yours is 2 times that)"
            ),
        }
    },
    "hostile": {
        NOTEBOOK: {
            "test_ring_bytes_per_rank": Error(startswith="ring_bytes_per_rank(4096, 4) is 1.0"),
            "test_bus_bandwidth": Error(startswith="bus_bandwidth(67108864, 0.001, 8) is 42.0"),
            "test_ring_all_reduce": Error(f"{RING}: {FORBIDDEN}"),
        }
    },
    "wrong": {
        NOTEBOOK: {
            "test_ring_peers": Error("ring_peers(0, 4) is (3, 1), but the answer is (1, 3)"),
            "test_ring_all_reduce": Error(
                startswith="ring_all_reduce on 4 processes, a float32 tensor of 8 elements: "
                "rank 0 holds"
            ),
        }
    },
    "shortcut": {
        NOTEBOOK: {
            "test_ring_peers": Error(contains=NO_PACKAGE),
            "test_bus_bandwidth": Error(contains=NO_PACKAGE),
            "test_ring_all_reduce": Error(
                "ring_all_reduce on 4 processes, a float32 tensor of 8 elements: " + FORBIDDEN
            ),
        }
    },
}
PRINTED = {
    "hostile": {
        NOTEBOOK: (
            "ring_bytes_per_rank(4096, 4) is right.",
            "ring_all_reduce sums over 4 processes with point-to-point "
            "messages, sending 2(n-1)/n S bytes per rank.",
        )
    }
}

# the origin attack: every graded function's name bound to the package's own function, an
# alias, a partial, a wrapper or a class attribute of it (no `def`): refused, 0 everywhere
SUBMISSIONS["origin"], EXPECTED["origin"], ERRORS["origin"] = origin_attack(
    "real_processes", SOLUTIONS, enames={"test_ring_all_reduce": "AssertionError"}
)  # the ranks' check reports it so
