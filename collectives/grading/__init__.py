"""Checks for the exercises' test cells: precise messages for learners, re-checked in isolation.

The graded notebooks in ``exercises/`` (nbgrader) call these functions in their test cells.
Every check first looks at the *form* of a learner's answer (a list where steps are expected,
integers where ranks are expected, one number where seconds are expected) and raises
:class:`~collectives.GradingError` with a message that says what was found instead ("... is
None: did you forget `return`?"); then it checks the *content* against the package or against
first principles and raises ``AssertionError`` naming the first thing that is wrong ("after the
last step, rank 3 chunk 1 holds nothing; ..."). nbgrader gives 0 points to a test cell that
raises anything, so both kinds simply fail the cell, with a message the learner can act on.

What lives where
----------------
``checks``
    check primitives: one number, a number close to a value or to what a function of the
    package returns by name (``check_reference``), a choice, a shape; a learner's value in
    words; the package computations several assignments compare with (``schedule_seconds``,
    ``fastest_name``, ``dispatch_seconds``).
``diagnosis``
    schedules: ``check_schedule`` (form, ranges, neighbour rules, ``verify`` and a numeric
    check from first principles, step counts) and, when one is wrong, where it first departs
    from a reference (``step_states``, ``describe_slot``).
``isolation/``
    a learner's function re-run from its source without the package (``call(...,
    isolated=True)``, ``run_isolated``), and ``recheck``: the checks run on plain data in a
    fresh process, importing a read-only copy of the package. Its map: its docstring.
``cohort``
    the cases a hidden test draws from the course seed (``_grading.cohort.cases``), so that
    they differ from one cohort to the next.
``tasks/<assignment>``
    the checks and answers of one graded assignment (``tasks/topology_reasoning``,
    ``tasks/cluster_collectives``, ``tasks/fp8``, ...), each named after its folder in
    ``exercises/source/``. A new graded task goes there.

This package re-exports the names the notebooks call (``collectives.grading.<name>``, ``from
collectives.grading import ...``: :data:`__all__`, the primitives, the isolation's and those of
the topology_reasoning, cluster_collectives and fp8 tasks). The earlier module names stay, as
compatibility modules: ``slices``, ``clusters``, ``fp8_tasks``, ``plan_tasks``,
``collective_tasks``, ``processes`` (the task modules), ``recheck`` and ``learner_process``
(the isolation's); ``sandbox``, ``classroom`` and ``precheck`` re-export the instructor's
tools, which live in the top-level package ``collectives_grader`` (they need jupyter_client
and nbgrader, and graded code never sees them); this package never imports those three.

Tamper resistance, and its limits
---------------------------------
A learner's code runs in the same kernel as the tests, before them. The hidden tests of the
course's notebooks therefore (1) re-load this package from disk with ``importlib.reload``,
which re-executes each of its modules too (:data:`MODULES`, in dependency order, subpackages
included) and so restores every function defined in them, and (2)
hand the learner's answers to :func:`recheck`, which converts them to plain data (JSON of
ints, floats, strings and lists: :mod:`.isolation.wire`) and runs the checks
in a new interpreter started with ``sys.executable -I`` that imports ``collectives`` from a
private, read-only copy of the package (:mod:`.isolation.snapshot`: a new temporary directory
holding only ``collectives/``, compiled, its files hashed and compared with the package's
before every use, replaced when anything differs). The verdict comes back on the
subprocess's stdout, tagged with a random nonce.

This defends against:

- rebinding or monkeypatching anything in ``collectives`` from a notebook cell (``cl.verify``,
  ``cl.simulate``, ``cl.time``, ``cl.busbw``, ``cl.analytic.*``, ``cl.algorithms.*``,
  ``cl.Schedule``, ``collectives.grading.*``), or in what the checks compute with
  (``math.isclose``, numpy): none of it reaches the subprocess, and the reload undoes it for
  this package's modules (also a rebound ``collectives.grading.checks`` or ``.diagnosis``);
- answers that only pretend to be data (objects with a lying ``__eq__``, lists that change when
  read twice): the subprocess sees the plain values they converted to, once;
- names the notebook defines (its own ``check_close``, constants with the tests' names, a
  ``range`` or ``dict`` of its own): the hidden tests read no name they do not bind themselves,
  besides the learner's functions, and define their own constants and expected values;
- edits to the test cells themselves: ``nbgrader autograde`` restores them from the gradebook;
- a ``collectives/`` or ``numpy.py`` written next to the notebook, in the working directory or
  in the folder above the package (the repository root, in an editable install): ``-I`` keeps
  the working directory, the script's directory, ``PYTHON*`` variables and the user site off
  both subprocesses' ``sys.path``, and the only directory added to it is the read-only copy,
  which holds nothing but the package; both subprocesses run there and check that
  ``collectives`` came from it;
- exceptions hidden by IPython hooks (``showtraceback``, ``set_custom_exc``): nbgrader 0.9
  marks the cell failed from the kernel's execute reply.

It does not defend against, by itself (the grading sandbox, ``collectives_grader.sandbox``,
covers the file, network and resource items when autograding runs in it, as ``exercises/``
configures; an instructor who opts out of the sandbox should grade in a disposable
container or VM):

- patching, in the kernel, what the hidden tests themselves run on: the standard library
  (``importlib.reload``, ``subprocess.run``, ``json``, ``sys.executable``, ``builtins``), the
  interpreter or IPython (input or AST transformers that rewrite or drop later cells, patched
  kernel methods), or a thread that re-patches this package between the reload and its use;
- reading or writing files the autograding account can reach (the source notebook with the
  hidden tests, the gradebook);
- a function that returns the right answer by calling the package's own solution
  (``cl.algorithms.ring_all_gather``, ``cl.analytic.ring_all_gather``) in a task whose hidden
  tests call it in the kernel (``_grading.call(f, ...)`` without ``isolated=True``), or that
  detects the grader; tasks graded with ``isolated=True`` stop the ordinary ways of calling the
  package (next sections);
- exhausting memory or CPU (nbgrader's per-cell timeout bounds the time only).

Tasks solved without the package
--------------------------------
A task that asks a learner to design or estimate something the package computes in one call
(a diameter, a bisection bandwidth, the time of a collective on a slice) is graded with
``_grading.call(function, *args, isolated=True)`` inside the checks given to :func:`recheck`.
The function is then not called in the kernel. Its source code is read there
(:func:`inspect.getsource`), with the sources of the notebook's functions it calls, the plain
values (numbers, strings, lists, tuples, dicts, numeric arrays) of the globals it reads and the
names of the modules and library objects it uses (:mod:`.isolation.reading`), and sent as
plain text and JSON to a fresh ``sys.executable -I`` process, the *learner's process*
(:mod:`.isolation.learner_process`, run by its path from the package copy). Before it runs
any of the learner's code, that process removes every ``collectives`` module from
``sys.modules`` and every ``sys.path`` entry that holds the package (except site-packages,
where a wheel install puts it beside numpy), and puts first
on ``sys.meta_path`` a finder that refuses ``collectives`` and its submodules with
``ImportError: this task must be solved without the collectives package (...)``; a global of
the notebook that is the package or comes from it (``cl``, ``from collectives.measures import
diameter``, a Topology built with it) becomes a stand-in that raises the same error when the
code touches it. The calls are made there, and only their results come back, as plain data.
Only then do the checks run, in the re-check process above, which imports ``collectives``: the
learner's code never runs in the process that checks it, so it cannot patch the checks, their
``math.isclose`` or their verdict line. :func:`run_isolated` makes one such call at once (the
visible tests use it, so that a learner sees the message before grading).

This stops: a graded function that calls the package in any ordinary way, through the
notebook's ``cl``, names imported from the package, objects built with it, ``import
collectives`` or ``importlib.import_module("collectives...")`` inside the function, or the
package's own answers (``cl.measures.diameter``, ``cl.time``, ``cl.grading.<reference>``):
the call raises that ``ImportError`` and the task scores 0, with a message that names what was
used; a graded name that is not the learner's own code at all (bound to the package's function,
an alias, a ``functools.partial`` or ``wraps`` of it, a class attribute, a function built from a
copy of the package's files: :mod:`.isolation.origin`), refused before it is read; answers that lie
about equality (they are re-encoded as plain values in the learner's process); and, as before,
everything done to the kernel's state (only source text and plain values leave it).

It does not stop (the sandbox below bounds what such code can reach): code written to get
round it, in the learner's process (removing the finder from ``sys.meta_path``, loading the
package's files with ``importlib.util`` or ``exec``, reading them as text) or in the kernel
(patching ``inspect.getsource``, ``subprocess`` or ``json`` to send other code: that code
must still run without the package); the package's source copied into the notebook; reading
any file the grading account can reach (the solutions, the gradebook); exhausting memory in
the learner's process (its time is bounded by ``recheck``'s timeout). The grading kernel
itself runs under
bubblewrap (``collectives_grader.sandbox``, ``c.Execute.kernel_name =
"collectives-sandbox"`` in exercises/nbgrader_config.py): it sees only the student's own
working copy (the handed-in files read-only, on a size-limited tmpfs it may write to), a
read-only, hash-checked copy of the package and the read-only system, no network but its
own loopback, and CPU, per-process and (where a memory cgroup is available) whole-kernel
memory, process, disk and file-size limits; so the solutions, the gradebook and other
submissions are out of its reach.

Forbidden names: tasks that allow part of the package
-----------------------------------------------------
A task may let the learner use some of the package (build a :class:`~collectives.Schedule`,
``verify`` it, draw it on ``topology.ring``) while forbidding the rest (the algorithm builders,
``analytic``, ``busbw``, ``algorithms.fastest``, ``grading.schedule_seconds``). The hidden test
declares it, per task, in the source notebook::

    _grading.call(my_schedule, 8, isolated=True,
                  allow=("collectives.Schedule", "collectives.verify", "collectives.topology.ring"))
    _grading.call(my_model, 8, 2**20, isolated=True, forbid=("collectives.analytic",
                                                             "collectives.busbw"))

``allow``: the only names usable (a module with everything in it; ``isolation.SCHEDULE_TOOLS``
is the usual set for a schedule); ``forbid``: names refused even so, or, alone, the only ones
refused. Names are checked when the test runs (a name the package lacks is a
:class:`~collectives.GradingError`, a bug in the test). The learner's process then imports the
package from the read-only copy and guards every way in: ``import`` statements (a replaced
``builtins.__import__`` that lets the package's own modules import freely), ``importlib
.import_module``, and the notebook's globals that are modules, classes or functions of the
package. An allowed object is handed out as itself, a module on the way to one as a guarded
stand-in, and anything else raises ``ImportError: collectives.algorithms is forbidden in this
task: write that part yourself (here you may use only ...)``, so the task scores 0 with
feedback naming the forbidden name. Calls with different rules in one :func:`recheck` run in
different processes. Without ``allow`` or ``forbid`` the whole package is refused, as above.
What this does not stop: reaching forbidden code through an allowed object's internals
(``cl.verify.__globals__``, ``sys.modules``), which is writing code to get round the grading,
and is left to the sandbox and to the instructor.

The package never prints.
"""

import importlib
import sys

from ..errors import GradingError  # noqa: F401  (collectives.grading.GradingError, as before)

__all__ = [
    "check_schedule",
    "check_number",
    "check_close",
    "check_reference",
    "check_choice",
    "call",
    "fastest_name",
    "dispatch_seconds",
    "step_states",
    "describe_slot",
    "schedule_seconds",
    "recheck",
    "NEIGHBOUR_RULES",
    "run_isolated",
    "NO_PACKAGE",
    "FORBIDDEN",
    "SCHEDULE_TOOLS",
    "check_shape",
    "check_estimate",
    "check_no_worse",
    "slice_hops",
    "slice_diameter",
    "slice_bisection_bandwidth",
    "v5e_axis_seconds",
    "v5e_all_reduce_seconds",
    "best_v5e_slice_shape",
    "wrapped_axis_for",
    "v5e_axis_lower_bound",
    "v5e_slice_all_reduce_seconds",
    "wrapped_axis_step_seconds",
    "hierarchical_level_seconds",
    "hierarchical_bottleneck",
    "pipelined_hierarchical_seconds",
    "hierarchical_segments_needed",
    "mesh_step_seconds",
    "rail_placement",
    "placement_slowdown",
    "check_placement",
    "misplacement_ratio",
    "rail_all_reduce_seconds",
    "sharp_or_ring",
    "superpod_count",
    "check_e4m3_values",
    "check_e4m3_codes",
    "check_delayed_scales",
    "check_fp8_all_reduce",
    "flushing_ranks",
    "check_flushing_ranks",
    "MODULES",
]

#: every module :func:`importlib.reload` of this package executes again, in dependency order
#: (each after the modules it imports), so that each imports the fresh copies of those before
#: it; the compatibility modules last, after what they re-export. Not here: the programs run
#: by their path (``isolation/learner_process.py`` and its compatibility module), which no
#: kernel-side code calls; the instructor's tools (``sandbox``, ``classroom``, ``precheck``),
#: which this package never imports; the learner's self-check command (``selfcheck``,
#: ``model_answers``), which no notebook cell imports; and, as before the re-layering, the
#: compatibility modules ``collective_tasks`` and ``processes``, which it never imported
#: either: the hidden tests use them only by name in the re-check process (a fresh import) or
#: reload them themselves (``processes``), and their task modules (``tasks.all_reduce``, ...)
#: are reloaded here.
MODULES = (
    "cohort",
    "checks",
    "diagnosis",
    "isolation.wire",
    "isolation.trust",
    "isolation.snapshot",
    "isolation.origin",
    "isolation.reading",
    "isolation.calls",
    "isolation.orchestrator",
    "isolation",
    "tasks.topology_reasoning",
    "tasks.cluster_collectives",
    "tasks.all_reduce",
    "tasks.all_to_all",
    "tasks.cost_models",
    "tasks.fp8_codec",
    "tasks.fp8_retired",
    "tasks.fp8",
    "tasks.real_processes",
    "tasks.fabric",
    "tasks.planning",
    "tasks",
    "slices",
    "clusters",
    "fp8_tasks",
    "plan_tasks",
    "recheck",
)


def _load(name):
    """This package's module ``name`` (``"checks"``, ``"isolation.calls"``), executed from its
    file now, and bound again as an attribute of the package above it.

    Executing it again when it was imported before is what makes ``importlib.reload`` of this
    package restore every function of every module. It is looked up in ``sys.modules``, not as
    an attribute of this package, which a notebook may have rebound (the binding is restored
    too).
    """
    full_name = f"{__name__}.{name}"
    if full_name in sys.modules:
        module = importlib.reload(sys.modules[full_name])
    else:
        module = importlib.import_module(full_name)
    parent, _, attribute = full_name.rpartition(".")
    setattr(sys.modules[parent], attribute, module)
    return module


for _name in MODULES:
    _load(_name)

# The imports below must follow the loop (E402 is right as written): the loop executes every
# module again on a reload of this package, and these names must be bound from the fresh
# modules, not the stale ones an import at the top would find in sys.modules.
from .checks import (  # noqa: E402 (after the reload loop, see above)
    check_choice,
    check_close,
    check_estimate,
    check_no_worse,
    check_number,
    check_reference,
    check_shape,
    dispatch_seconds,
    fastest_name,
    schedule_seconds,
)
from .diagnosis import NEIGHBOUR_RULES, check_schedule, describe_slot, step_states  # noqa: E402
from .isolation import FORBIDDEN, NO_PACKAGE, SCHEDULE_TOOLS, call, run_isolated  # noqa: E402

# the function: it hides the compatibility module's name
from .isolation.orchestrator import recheck  # noqa: E402
from .tasks.cluster_collectives import (  # noqa: E402 (after the reload loop)
    check_placement,
    hierarchical_bottleneck,
    hierarchical_level_seconds,
    hierarchical_segments_needed,
    mesh_step_seconds,
    misplacement_ratio,
    pipelined_hierarchical_seconds,
    placement_slowdown,
    rail_all_reduce_seconds,
    rail_placement,
    sharp_or_ring,
    superpod_count,
)
from .tasks.fp8 import (  # noqa: E402 (after the reload loop)
    check_delayed_scales,
    check_e4m3_codes,
    check_e4m3_values,
    check_flushing_ranks,
    check_fp8_all_reduce,
    flushing_ranks,
)
from .tasks.topology_reasoning import (  # noqa: E402 (after the reload loop)
    best_v5e_slice_shape,
    slice_bisection_bandwidth,
    slice_diameter,
    slice_hops,
    v5e_all_reduce_seconds,
    v5e_axis_lower_bound,
    v5e_axis_seconds,
    v5e_slice_all_reduce_seconds,
    wrapped_axis_for,
    wrapped_axis_step_seconds,
)
