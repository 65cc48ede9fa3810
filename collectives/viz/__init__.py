"""Figures drawn from Schedules and Topologies, by kind of figure; drawing only (every model
number comes from the package below viz).

* :mod:`.style`: the one font API (:func:`use_fonts`, called once by every chapter), the
  palette, one colour per link level and per algorithm;
* :mod:`.buffers`: every participant's buffer in one symbolic state (:func:`draw_buffers`);
* :mod:`.wiring`: any Topology's wiring, placed from its declared info (a ring, torus
  planes with their wraparound, a DGX node, a cluster's rails, leaves and spines, a fabric),
  with a Schedule step's transfers along their routes (:func:`draw_topology`);
* :mod:`.animation`: a Schedule step by step (:func:`draw_schedule`, :func:`animate`,
  :func:`stepper`; the frame machinery animates any figure);
* :mod:`.costs`: time and busbw against size, time per link level, bars, NVLink bytes;
* :mod:`.hardware`: TPU slices and cubes, hop maps, scalable units, small clusters;
* :mod:`.loads`: any Topology's link loads as hot cables, over a schedule or step by step;
* :mod:`.fabric`: layered fabrics, link and cable loads; :mod:`.trees`: reduction trees;
  :mod:`.fp8`: number formats; :mod:`.dist`: measured sweeps and processes;
  :mod:`.timeline`: a training step's Gantt chart;
* :mod:`.calculators`: the offline calculators (collectives, training-step plans).

The old modules (``gpu``, ``cluster``, ``tpu``, ``interactive``, ``plan``) remain as
compatibility modules naming everything they named. matplotlib, ipywidgets and plotly are
imported inside the functions. Taught from chapter "Cost models and the ring all-gather" on.
"""

from .animation import animate, draw_schedule, frame_figure, stepper
from .buffers import MAX_CHUNK_LABELS, chunk_colour, draw_buffers
from .costs import case_colour, plot_costs
from .style import use_fonts
from .wiring import draw_topology, draw_wiring, wiring_of

__all__ = [
    "chunk_colour",
    "draw_buffers",
    "draw_topology",
    "draw_schedule",
    "animate",
    "plot_costs",
    "case_colour",
    "stepper",
    "MAX_CHUNK_LABELS",
    "use_fonts",
    "wiring_of",
    "draw_wiring",
    "frame_figure",
]

#: the modules of this package, imported when first named (``cl.viz.trees``, and the old
#: ``cl.viz.interactive`` as before, without importing them all up front)
_MODULES = (
    "animation",
    "buffers",
    "calculators",
    "cluster",
    "costs",
    "dist",
    "fabric",
    "fp8",
    "gpu",
    "hardware",
    "interactive",
    "loads",
    "plan",
    "style",
    "timeline",
    "tpu",
    "trees",
    "wiring",
)


def __getattr__(name):
    if name in _MODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
