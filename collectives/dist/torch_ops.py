"""Adapters to ``torch.distributed``: a step's messages, and torch's own collectives.

:class:`Exchange` moves one rank's messages of one step as raw bytes, all posted together
with ``batch_isend_irecv`` (so any numeric numpy dtype travels, including those gloo's own
collectives reject). :func:`run_collective` calls ``torch.distributed``'s own implementation
of a collective (:data:`TORCH_OPS`) on one rank's row. Both run inside a worker process,
which imports torch and passes it in: importing this module does not import torch. For
:func:`~collectives.dist.run_torch` and :func:`~collectives.dist.compare_with_torch`,
:func:`torch_job` checks a run's arguments before any process starts and :func:`compare`
puts a schedule's outputs beside torch's in a :class:`Comparison`. :func:`mesh_groups_task`
builds torch's own device mesh (``torch.distributed.device_mesh.init_device_mesh``) in a
worker and reports the ranks of each of its dimensions' process groups.
"""

from dataclasses import dataclass

import numpy as np

from ..errors import CollectivesError
from ..semantics import collective_spec
from ..validation import input_rows

__all__ = [
    "TORCH_OPS",
    "P2P_OP",
    "MESH_OP",
    "Comparison",
    "Exchange",
    "run_collective",
    "torch_job",
    "compare",
    "mesh_groups_task",
    "torch_op",
]

#: the torch function a device-mesh task calls (:func:`mesh_groups_task`)
MESH_OP = "torch.distributed.device_mesh.init_device_mesh"

#: newer torch names of the functions the collective registry names (``all_gather_single``
#: replaced ``all_gather_into_tensor``); the first one the installed torch has is called
_NEWER = {
    "all_gather_into_tensor": "all_gather_single",
    "reduce_scatter_tensor": "reduce_scatter_single",
}

#: collectives :func:`run_collective` can run (permute is point-to-point: it has no torch
#: collective to compare with; all_to_all_v needs per-rank split sizes)
_SUPPORTED = (
    "all_gather",
    "reduce_scatter",
    "all_reduce",
    "all_to_all",
    "broadcast",
    "reduce",
    "gather",
    "scatter",
)


#: collective -> the ``torch.distributed`` functions :func:`run_collective` may call, from the
#: registry's ``torch_name`` (:mod:`collectives.semantics`)
def _torch_functions(name):
    """The torch.distributed functions that run collective ``name``, newest first."""
    torch_name = collective_spec(name).torch_name
    if torch_name is None:
        return ()
    return tuple(n for n in (_NEWER.get(torch_name), torch_name) if n)


TORCH_OPS = {name: _torch_functions(name) for name in _SUPPORTED}

#: what :func:`~collectives.dist.compare_with_torch` names the schedule's side of a run
P2P_OP = "point-to-point (batch_isend_irecv)"


@dataclass(frozen=True, eq=False)
class Comparison:
    """A schedule's outputs next to ``torch.distributed``'s own collective on the same inputs.

    ``ranks``: the rows compared (all ranks; only the roots for ``reduce`` and ``gather``,
    whose other rows NCCL and gloo leave unspecified). ``equal``: exact equality on those
    rows (use integer or integer-valued inputs: float sums in a different order round
    differently).
    """

    collective: str
    op: str
    schedule_outputs: np.ndarray
    torch_outputs: np.ndarray
    ranks: tuple
    equal: bool
    max_abs_diff: float

    def __repr__(self):
        return (
            f"Comparison({self.collective}: schedule vs {self.op} on ranks "
            f"{list(self.ranks)}: equal={self.equal}, max_abs_diff={self.max_abs_diff:g})"
        )


class Exchange:
    """One step's messages of one rank over torch.distributed: every receive posted, then
    every send, then the receives waited for in order, each message in ``n_segments`` pieces
    (``segments``: the old keyword, still accepted).

    gloo sends a message only once its receiver has posted the receive (a rendezvous:
    gloo/transport/tcp/pair.cc, ``Pair::send``), so receives go first. A message the
    caller wants ``into`` a view of its buffer lands there directly (no inbox, no copy); the
    others land in an inbox reused step after step. ``on_piece(peer, rows, lo, hi)`` runs as
    soon as elements ``lo:hi`` of a peer's message are in, while later pieces are still on
    the wire (on a GPU, once the whole step has arrived)."""

    def __init__(self, torch, tdist, device, n_segments=1, *, segments=None):
        from .programs import check_segments

        self.torch, self.tdist, self.device = torch, tdist, device
        self.n_segments = check_segments(n_segments, segments)
        self.tag = 0
        self._inboxes = {}  # (peer, bytes) -> a receive buffer, reused step after step

    def _inbox(self, peer, nbytes):
        """A receive buffer: reused, since a step's rows are applied before the next step
        (a fresh one per step would cost page faults on every large message)."""
        t = self._inboxes.get((peer, nbytes))
        if t is None:
            if self.device.type == "cpu":  # numpy's allocator: huge pages when large
                t = self.torch.from_numpy(np.empty(nbytes, dtype=np.uint8))
            else:
                t = self.torch.empty(nbytes, dtype=self.torch.uint8, device=self.device)
            self._inboxes[(peer, nbytes)] = t
        return t

    def _bytes(self, rows):
        """``rows`` (a numpy array) as a flat uint8 tensor on the device, no copy on CPU."""
        flat = np.ascontiguousarray(rows).reshape(-1).view(np.uint8)
        return self.torch.from_numpy(flat).to(self.device)

    def __call__(self, sends, recvs, row_shape, dtype, into=None, on_piece=None):
        from .programs import pieces

        tdist, into = self.tdist, into or {}
        cpu = self.device.type == "cpu"
        base, size = self.tag, dtype.itemsize
        self.tag = (self.tag + self.n_segments) % 2**30  # every rank steps alike
        row_elements = int(np.prod(row_shape, dtype=np.int64))
        direct = {p for p, view in into.items() if cpu and view.flags.c_contiguous}
        ops, arrivals, inbox = [], [], {}
        for p, count in recvs:  # receives first: posted before data arrives
            if p in direct:
                inbox[p] = into[p]
                t = self._bytes(into[p])
            else:
                t = self._inbox(p, count * row_elements * size)
                inbox[p] = t
            for j, (lo, hi) in enumerate(pieces(count * row_elements, self.n_segments)):
                if size:
                    ops.append(tdist.P2POp(tdist.irecv, t[lo * size : hi * size], p, tag=base + j))
                    arrivals.append((j, p, lo, hi))
        n_recvs = len(ops)
        for p, payload in sends:
            if payload.size and size:
                t = self._bytes(payload)
                for j, (lo, hi) in enumerate(pieces(payload.size, self.n_segments)):
                    ops.append(tdist.P2POp(tdist.isend, t[lo * size : hi * size], p, tag=base + j))
        works = tdist.batch_isend_irecv(ops) if ops else []
        if len(works) != len(ops) or not cpu:  # coalesced (NCCL): one handle for all
            for work in works:
                work.wait()
            works = [None] * len(ops)
        got = {p: self._rows(inbox[p], count, row_shape, dtype) for p, count in recvs}
        order = sorted(range(n_recvs), key=lambda i: arrivals[i][:2])  # piece j of all peers
        for i in order:
            if works[i] is not None:
                works[i].wait()
            _, p, lo, hi = arrivals[i]
            if p in into and p not in direct:
                into[p].flat[lo:hi] = got[p].reshape(-1)[lo:hi]
            if on_piece is not None:
                on_piece(p, got[p], lo, hi)
        for work in works[n_recvs:]:
            if work is not None:
                work.wait()
        return {p: into.get(p, got[p]) for p, _ in recvs}

    @staticmethod
    def _rows(t, count, row_shape, dtype):
        """A received message as numpy rows: the buffer view it landed in, or the inbox."""
        if isinstance(t, np.ndarray):
            return t
        return t.cpu().numpy().view(dtype).reshape((count,) + tuple(row_shape))


def torch_op(tdist, collective):
    """``(name, function)``: the first of ``TORCH_OPS[collective]`` the ``torch.distributed``
    module ``tdist`` has (the newest name first: torch 2.13 deprecates
    ``all_gather_into_tensor`` and ``reduce_scatter_tensor``)."""
    for name in TORCH_OPS[collective]:
        fn = getattr(tdist, name, None)
        if fn is not None:
            return name, fn
    raise CollectivesError(  # pragma: no cover (every supported torch has one)
        f"this torch has none of torch.distributed.{', '.join(TORCH_OPS[collective])}"
    )


def _my_group(task, rank, tdist):
    """``(group, members)``: the torch process group of this rank's group (every rank creates
    every group, in order, as torch.distributed requires), or ``(None, all ranks)``."""
    groups = task.get("groups")
    if groups is None:
        return None, None
    mine = None
    for members in groups:
        handle = tdist.new_group(list(members))
        if rank in members:
            mine = (handle, list(members))
    return mine


def run_collective(task, n, torch, tdist, device, backend, rank=None):
    """In a worker of ``n`` ranks: torch's own ``task["collective"]`` on this rank's
    ``task["row"]``, inside this rank's group when ``task["groups"]`` is given, with
    ``task["op"]`` ("sum" or "max") as the reduction; returns ``(output row, name of the
    torch function)``. A dtype the backend's collectives do not support raises a
    :class:`~collectives.CollectivesError` saying so."""
    collective, root = task["collective"], task["root"]
    x = torch.from_numpy(task["row"].copy()).to(device)
    name, fn = torch_op(tdist, collective)
    reduce_op = tdist.ReduceOp.MAX if task.get("op") == "max" else tdist.ReduceOp.SUM
    group, members = _my_group(task, rank, tdist)
    m = n if members is None else len(members)
    on = {} if group is None else {"group": group}
    root_rank = None if root is None else (root if members is None else members[root])
    try:
        if collective == "all_gather":
            out = torch.empty(m * x.numel(), dtype=x.dtype, device=device)
            fn(out, x, **on)
        elif collective == "reduce_scatter":
            out = torch.empty(x.numel() // m, dtype=x.dtype, device=device)
            fn(out, x, op=reduce_op, **on)
        elif collective == "all_to_all":
            out = torch.empty_like(x)
            fn(out, x, **on)
        elif collective == "all_reduce":
            out = x
            fn(out, op=reduce_op, **on)
        elif collective == "broadcast":
            out = x
            fn(out, src=root_rank, **on)
        elif collective == "reduce":
            out = x
            fn(out, dst=root_rank, op=reduce_op, **on)
        elif collective == "gather":
            parts = [torch.empty_like(x) for _ in range(m)] if rank == root_rank else None
            fn(x, gather_list=parts, dst=root_rank, **on)
            out = (
                torch.cat(parts) if parts is not None else torch.zeros(m * x.numel(), dtype=x.dtype)
            )
        else:  # scatter
            out = torch.empty(x.numel() // m, dtype=x.dtype, device=device)
            parts = list(x.chunk(m)) if rank == root_rank else None
            fn(out, scatter_list=parts, src=root_rank, **on)
    except RuntimeError as e:
        first = (str(e).strip().splitlines() or [""])[0]
        if "scalar type" in first.lower() or "unsupported" in first.lower():
            raise CollectivesError(
                f"torch.distributed.{name} over {backend} does not support dtype "
                f"{task['row'].dtype} (torch says: {first}); collectives.dist.run can still "
                "run a Schedule on it (its messages are raw bytes)"
            ) from e
        raise
    return out.cpu().numpy(), f"torch.distributed.{name}"


def torch_job(collective, inputs, root, *, op="sum", groups=None):
    """A run of torch's own ``collective`` on ``inputs`` (one row per rank), inside every group
    of ``groups`` (an (G, m) array of ranks, or None for one group of all) with reduction
    ``op``, checked before any process starts: the job :func:`~collectives.dist.run_many`
    launches."""
    spec = collective_spec(collective)
    if spec.name not in TORCH_OPS:
        raise CollectivesError(
            f"torch.distributed has no collective for {spec.name}"
            + (
                " (it is point-to-point: run its Schedule, whose messages are batch_isend_irecv)"
                if spec.name == "permute"
                else ""
            )
        )
    if op not in ("sum", "max"):
        raise CollectivesError(f"op must be 'sum' or 'max', got {op!r}")
    data = input_rows(inputs)
    n, length = data.shape
    m = n if groups is None else len(groups[0])
    if spec.rooted:
        root = 0 if root is None else root
        if (
            isinstance(root, (bool, np.bool_))
            or not isinstance(root, (int, np.integer))
            or not 0 <= root < m
        ):
            raise CollectivesError(f"root must be a rank (0..{m - 1}), got {root!r}")
        root = int(root)
    elif root is not None:
        raise CollectivesError(f"{spec.name} has no root; got root={root!r}")
    if spec.name in ("reduce_scatter", "all_to_all", "scatter") and length % m:
        raise CollectivesError(
            f"{spec.name} over {m} ranks needs rows whose length divides into {m} equal "
            f"parts; got length {length}"
        )
    native = data.dtype.newbyteorder("=")
    rows = np.ascontiguousarray(data, dtype=native)
    return {
        "kind": "torch",
        "collective": spec.name,
        "root": root,
        "n": n,
        "op": op,
        "groups": None if groups is None else [list(map(int, g)) for g in groups],
        "what": f"torch.distributed {spec.name}",
        "rows": rows,
    }


def compare(schedule, ours, theirs, op):
    """The :class:`Comparison` of ``schedule``'s outputs ``ours`` with torch's ``theirs``
    (made by torch's ``op``), on the rows both define."""
    spec = collective_spec(schedule.collective)
    if spec.name in ("reduce", "gather"):  # only the roots' rows are defined
        ranks = tuple(int(r) for r in schedule.groups[:, schedule.root])
    else:
        ranks = tuple(range(schedule.n_ranks))
    a, b = ours[list(ranks)], theirs[list(ranks)]
    wide = np.complex128 if np.iscomplexobj(a) else np.float64
    diff = float(np.max(np.abs(a.astype(wide) - b.astype(wide)))) if a.size else 0.0
    return Comparison(
        spec.name, op, ours, theirs, ranks, bool(a.shape == b.shape and np.array_equal(a, b)), diff
    )


def mesh_groups_task(task, rank, tdist):
    """In a worker of the default process group: torch's ``init_device_mesh("cpu",
    task["shape"], mesh_dim_names=task["names"])`` (every rank calls it with the same
    shape, as its docstring requires), and, for each named dimension, the global ranks of
    this rank's process group along it (``get_process_group_ranks(mesh.get_group(name))``).
    Returns ``({name: [ranks]}, MESH_OP)``."""
    from torch.distributed.device_mesh import init_device_mesh

    mesh = init_device_mesh("cpu", tuple(task["shape"]), mesh_dim_names=tuple(task["names"]))
    groups = {
        name: [int(r) for r in tdist.get_process_group_ranks(mesh.get_group(name))]
        for name in task["names"]
    }
    return groups, MESH_OP
