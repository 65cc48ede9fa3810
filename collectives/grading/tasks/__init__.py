"""The checks and answers of each graded assignment: one module per folder of
``exercises/source/`` that needs checks of its own.

``topology_reasoning``   TPU slices: hops, diameter, bisection, v5e times, the best slice shape
``cluster_collectives``  GPU clusters: the hierarchical all-reduce's levels and pipelining with
                         latencies, then decisions judged by cl.time: its segments, a mesh
                         placed on the GPUs for a step, the ring or SHARP along the rails (the
                         earlier notebook's answers, SuperPOD counts among them, kept)
``all_reduce``           any Rabenseifner or hierarchical all-reduce; its bus bandwidth
``all_to_all``           any Bruck, pairwise or chain all-to-all
``cost_models``          the ring all-gather fitted to measurements, sized and upgraded
``fp8``                  E4M3 by hand (``fp8_codec``), then recipes judged by what they do: a
                         format and block size, a delayed-scaling recipe, an FP8 all-reduce's
                         mu and order of additions (the earlier notebook's checks:
                         ``fp8_retired``)
``real_processes``       a recorded sweep and its alpha-beta fit, the Schedule or torch's
                         all-reduce by the fits, broken runs diagnosed, a ring all-reduce
                         written with torch.distributed, run on processes
``fabric``               a leaf-spine timed and sized under a switch budget, queue pairs for
                         a ring over many racks, the cable whose failure hurts a job most
``planning``             a training step's collectives, memory per device, a layout

The assignment ``all_gather_reduce_scatter`` is checked with the primitives
alone (:mod:`~collectives.grading.checks`, :mod:`~collectives.grading.diagnosis`, against
the package's own functions by name), so it has no module here. The notebooks reach these
modules under their earlier names too (``grading.slices``, ``grading.clusters``,
``grading.fp8_tasks``, ``grading.plan_tasks``, ``grading.collective_tasks``,
``grading.processes``: compatibility modules), and the grading package re-exports the public
names of the first three. A new graded task goes in its assignment's module here.
"""

__all__ = []
