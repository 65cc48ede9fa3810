"""The NVSwitch chips inside a GPU node: how many NVLink links every GPU has to each chip.

The GPU presets model a node's NVSwitch as **one crossbar** (one switch node, a link each
way per GPU at the GPU's whole NVLink bandwidth), which costs every pattern the way the
real chips do as long as every GPU splits its links among the chips in the same proportion
(chapter "GPU nodes and clusters" derives why). This module records that split, so that a
figure can draw the chips a node really has (:func:`collectives.viz.wiring.wiring_of`,
``chips=``) without changing any cost: the drawing spreads each transfer over the chips
in proportion to the links.

* DGX H100 (and the SuperPOD built of its nodes): 4 NVSwitch chips, each GPU's 18 NVLink 4
  links split 5 : 4 : 4 : 5 (The Scaling Book, "How to Think About GPUs",
  jax-ml.github.io/scaling-book/gpus, version of 2025-08-18).

Left out: the chips' own port counts and their internal crossbar, and the NVLink 5
systems (DGX B200, GB200 NVL72), whose per-chip split this module does not record.
"""

from __future__ import annotations

from ..errors import TopologyError

__all__ = ["SOURCE", "LINKS", "links"]

#: where the splits come from
SOURCE = (
    "The Scaling Book, How to Think About GPUs, https://jax-ml.github.io/scaling-book/"
    "gpus/ (version of 2025-08-18): 4 NVSwitches per DGX H100 node, 5+4+4+5 links"
)

#: system name -> NVLink links from every GPU to each NVSwitch chip of its node (SOURCE)
LINKS = {
    "dgx-h100": (5, 4, 4, 5),
    "superpod-h100": (5, 4, 4, 5),
}


def links(system) -> tuple[int, ...]:
    """The NVLink links every GPU of ``system`` has to each NVSwitch chip of its node:
    ``system`` is a name ("dgx-h100"), a :class:`~collectives.hardware.System` or a
    Topology built from one (its ``system``). Raises :class:`~collectives.TopologyError`
    for a system whose split is not recorded (:data:`LINKS`)."""
    record = getattr(system, "system", system)
    name = getattr(record, "name", record)
    if not isinstance(name, str) or name not in LINKS:
        known = ", ".join(LINKS)
        raise TopologyError(f"no NVSwitch chips recorded for {name!r} (recorded: {known})")
    return LINKS[name]
