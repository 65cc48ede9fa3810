"""Run a Schedule for real: one local process per rank, messages over ``torch.distributed``.

:func:`run` starts ``n_ranks`` worker processes on this machine, joins them into a
``torch.distributed`` process group (gloo on CPU, over loopback), and has each one execute
*its own part* of the schedule, step by step, the way a real collective library does:

* each worker holds only its rank's working buffer, laid out as in
  :mod:`collectives.semantics` (``n_chunks`` data slots, then ``n_scratch`` scratch slots);
* in every step it first reads all the chunks it sends (a snapshot: read-before-write), then
  posts one non-blocking receive per peer and one non-blocking send per peer (the chunks
  for that peer packed into one message), all together
  (``torch.distributed.batch_isend_irecv``), receives first;
* it writes what arrived as each message lands: a copy overwrites its slot (a message that
  only overwrites slots the step does not send is received straight into them), a reduce
  adds into it, so the arithmetic (and its rounding) is exactly that of
  :func:`collectives.simulate` (a step that writes a slot twice waits for all its messages
  and applies them in the schedule's transfer order). A transfer with ``src == dst`` is a
  local copy, no message. ``n_segments=`` sends each message in pieces, each combined as it
  lands (gloo's own ring all-reduce pipelines that way); the result is the same (the old
  keyword ``segments=`` still works).

Messages are raw bytes, so any numeric numpy dtype travels, including those gloo's own
collectives reject (int16, uint16, ...). The result is returned exactly as
:func:`collectives.simulate` returns it: one row per rank in NCCL's output layout, same
shape and dtype. :func:`run_torch` runs ``torch.distributed``'s *own* implementation of a
collective on the same inputs, and :func:`compare_with_torch` puts the two side by side.
:func:`run_local` executes the same per-rank program inside this process (no torch), to
show and test what each rank does.

What is modelled: the per-rank view of a schedule (who sends what to whom in each step),
real message passing between separate processes, and the exact data each rank ends with.
There is no global barrier between steps: a rank waits only for its own messages of a step
(each tagged with the step), so ranks drift apart as on real hardware, and still compute
what the synchronous step model says. What is left out: any
timing realism. Gloo over loopback on a laptop's CPU says nothing about link bandwidth,
NVLink or ICI latency, or contention; use :func:`collectives.time` on a
:class:`~collectives.Topology` for that. Starting the processes (each imports torch) takes
seconds, so batch several schedules into one :func:`run_many` call. Chapters use it to
show that a Schedule of the book runs for real and agrees with the library's collectives.

Backends: ``"gloo"`` (CPU, any machine with torch), ``"nccl"`` (one NVIDIA GPU per rank;
a clear :class:`~collectives.CollectivesError` where there is none) and ``"auto"`` (nccl
when CUDA is available, else gloo).

torch's own device mesh: :func:`device_mesh_groups` builds ``init_device_mesh`` on worker
processes and returns the process groups of each dimension, the groups
:meth:`collectives.Mesh.groups` names.

Measuring: :func:`sweep` times a Schedule and torch's own collective over sizes as
nccl-tests' ``all_reduce_perf`` does (``SweepResult.to_frame()``, ``format_table``;
:func:`collectives.viz.dist.plot_sweep` draws it; :func:`fit_alpha_beta` fits the cost
model's alpha and bandwidth to it, :mod:`~collectives.dist.fit`). On several machines the
same Schedule runs under torchrun: ``python -m torch.distributed.run ... -m
collectives.dist.torchrun_main ring_all_reduce`` (:mod:`~collectives.dist.torchrun_main`).
Failures end the run with the rank, the job and the step each rank had reached
(:mod:`~collectives.dist.board`), and no process is left behind.

Modules: :mod:`~collectives.dist.programs` (each rank's part of a Schedule; ``run_local``),
:mod:`~collectives.dist.torch_ops` (torch.distributed messages and collectives,
``Comparison``), :mod:`~collectives.dist.launch` (starting the worker processes, failures,
timeouts), :mod:`~collectives.dist.worker` (what each worker process runs),
:mod:`~collectives.dist.jobs` (the entry points below), :mod:`~collectives.dist.sweep` (the
timing sweep) and :mod:`~collectives.dist.board` (where each rank is). ``DistError`` is
defined in :mod:`collectives.errors`. torch is imported only inside functions: importing
this package does not import it.
"""

from ..errors import DistError
from .fit import AlphaBetaFit, fit_alpha_beta
from .jobs import compare_with_torch, device_mesh_groups, run, run_many, run_torch
from .launch import BACKENDS, DEFAULT_TIMEOUT, MAX_LOCAL_RANKS, resolve_backend
from .programs import MAX_SEGMENTS, run_local
from .sweep import SweepResult, SweepRow, format_table, sizes, sweep
from .torch_ops import TORCH_OPS, Comparison

__all__ = [
    "run",
    "run_many",
    "run_torch",
    "compare_with_torch",
    "run_local",
    "device_mesh_groups",
    "Comparison",
    "DistError",
    "BACKENDS",
    "TORCH_OPS",
    "MAX_LOCAL_RANKS",
    "DEFAULT_TIMEOUT",
    "sweep",
    "sizes",
    "format_table",
    "SweepResult",
    "SweepRow",
    "resolve_backend",
    "MAX_SEGMENTS",
    "fit_alpha_beta",
    "AlphaBetaFit",
]
