"""Named device meshes: the communicator groups of every parallelism axis.

A mesh axis is a communicator split, as in torch's ``DeviceMesh`` or JAX's ``Mesh``: the
ranks of ``Mesh({"dp": 4, "tp": 8})`` form a 4 x 8 grid, and "the tensor-parallel
all-reduce" is one all-reduce inside every row, run all at once: a collective over
``mesh.groups("tp")``, placed on a topology's endpoints with ``mesh.placement``. Later
chapters (and the costing of a training step) speak of collectives this way.

Modelled: axis names and sizes, row-major mesh ranks, one endpoint per mesh position.
Left out: meshes spanning several processes per device, and choosing a placement (a
``devices`` array is given, not searched for).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Mapping, Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

from .errors import CollectivesError
from .validation import int_array, integer

if TYPE_CHECKING:
    from .schedule import Schedule
    from .topology import Topology

__all__ = ["Mesh"]


def _readonly(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


class Mesh:
    """A named device mesh: ``Mesh({"dp": 4, "tp": 8})``, axes in the order given.

    Mesh rank ``r`` is the row-major index of a position over the axes (the last axis
    varies fastest). ``devices`` gives the topology endpoint of every position: an int
    array of the mesh shape (or anything of that many entries, e.g. flat), distinct and
    non-negative; default endpoint ``r`` for mesh rank ``r``. A Mesh cannot be changed once
    built.
    """

    axis_names: tuple[str, ...]
    shape: tuple[int, ...]
    n_ranks: int
    _placement: np.ndarray

    def __init__(self, axes: Mapping[str, int], devices: Optional[ArrayLike] = None) -> None:
        if not isinstance(axes, Mapping) or not axes:
            raise CollectivesError(
                f"axes must be a non-empty mapping of axis name to size, e.g. "
                f"{{'dp': 4, 'tp': 8}}, got {axes!r}"
            )
        for key in axes:
            if not isinstance(key, str) or not key:
                raise CollectivesError(f"mesh axis names must be non-empty strings, got {key!r}")
        shape = tuple(
            integer(size, f"the size of mesh axis {key!r}", minimum=1) for key, size in axes.items()
        )
        n_ranks = math.prod(shape)
        if devices is None:
            placement = np.arange(n_ranks, dtype=np.int64)
        else:
            placement = int_array(devices, "devices", minimum=0).ravel()
            if placement.size != n_ranks:
                raise CollectivesError(
                    f"devices must hold {n_ranks} endpoint ids (one per position of a "
                    f"{'x'.join(map(str, shape))} mesh), got {placement.size}"
                )
            if len(np.unique(placement)) != n_ranks:
                raise CollectivesError(
                    "devices must be distinct: two mesh positions share an endpoint"
                )
            placement = placement.copy()
        fields = {
            "axis_names": tuple(axes),
            "shape": shape,
            "n_ranks": n_ranks,
            "_placement": _readonly(placement),
        }
        for key, value in fields.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, key, value):
        raise CollectivesError(
            f"a Mesh cannot be changed once built (tried to set {key!r}); build a new one"
        )

    @classmethod
    def from_shape(cls, topology_shape: Sequence[int] | Topology, names: Sequence[str]) -> "Mesh":
        """One mesh axis per axis of a torus: ``Mesh.from_shape((4, 4), ("x", "y"))``.

        ``topology_shape`` is a shape tuple or a Topology that declares one (a torus)."""
        from .topology import Topology

        shape = topology_shape.shape if isinstance(topology_shape, Topology) else topology_shape
        if not isinstance(shape, (tuple, list)):
            raise CollectivesError(
                f"topology_shape must be a tuple of axis sizes or a Topology with a shape, "
                f"got {topology_shape!r}"
            )
        names = tuple(names) if not isinstance(names, str) else (names,)
        if len(names) != len(shape) or len(set(names)) != len(names):
            raise CollectivesError(
                f"names must be {len(shape)} distinct axis names (one per axis of shape "
                f"{tuple(shape)}), got {names!r}"
            )
        return cls(dict(zip(names, shape)))

    @property
    def placement(self) -> np.ndarray:
        """Flat, read-only: mesh rank -> topology endpoint."""
        return self._placement

    @property
    def devices(self) -> np.ndarray:
        """Read-only array of the mesh shape: the endpoint at every mesh position."""
        return self._placement.reshape(self.shape)

    def axis_size(self, name: str) -> int:
        """The size of mesh axis ``name``."""
        return self.shape[self._axis(name)]

    def groups(self, *axes: str) -> np.ndarray:
        """Read-only ``(G, m)`` array: the mesh ranks of every group varying only along
        ``axes`` (``m`` = the product of their sizes, ``G = n_ranks / m``).

        Members are row-major over the named axes in mesh order (whatever order they are
        named in); groups are row-major over the other axes. ``groups("tp")`` of
        ``Mesh({"dp": 2, "tp": 4})`` is ``[[0, 1, 2, 3], [4, 5, 6, 7]]``.
        """
        if not axes:
            raise CollectivesError(
                f"groups() needs at least one axis name, one of {', '.join(self.axis_names)}"
            )
        named = sorted({self._axis(a) for a in axes})
        if len(named) != len(axes):
            raise CollectivesError(f"groups() names an axis twice: {axes!r}")
        other = [i for i in range(len(self.shape)) if i not in named]
        ranks = np.arange(self.n_ranks).reshape(self.shape).transpose(other + named)
        return _readonly(ranks.reshape(-1, math.prod(self.shape[i] for i in named)))

    def device_groups(self, *axes: str) -> np.ndarray:
        """:meth:`groups` mapped through :attr:`placement`: the endpoints of every group."""
        return _readonly(self._placement[self.groups(*axes)])

    def collective(self, schedule: "Schedule", *axes: str) -> "Schedule":
        """``schedule`` (a collective over the size of ``axes``) run inside every group of
        those axes at once: ``mesh.collective(ring_all_reduce(8), "tp")`` is the
        tensor-parallel all-reduce. Cost it with ``placement=mesh.placement``."""
        from .transforms import grouped

        groups = self.groups(*axes)
        if getattr(schedule, "n_ranks", None) != groups.shape[1]:
            raise CollectivesError(
                f"the {'x'.join(axes)} groups have {groups.shape[1]} ranks but the schedule "
                f"has {getattr(schedule, 'n_ranks', '?')}; build it for {groups.shape[1]} ranks"
            )
        return grouped(schedule, groups, name=f"{schedule.name}[{','.join(axes)}]")

    def _axis(self, name: str) -> int:
        if name not in self.axis_names:
            raise CollectivesError(
                f"unknown mesh axis {name!r}; the axes are {', '.join(self.axis_names)}"
            )
        return self.axis_names.index(name)

    def __repr__(self):
        axes = ", ".join(f"{name!r}: {size}" for name, size in zip(self.axis_names, self.shape))
        return f"Mesh({{{axes}}})"
