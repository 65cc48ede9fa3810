"""Checks for the exercises' test cells: precise messages for learners, re-checked in isolation.

The graded notebooks in ``exercises/`` (nbgrader) call these functions in their test cells.
Every check first looks at the *form* of a learner's answer (a list where steps are expected,
integers where ranks are expected, one number where seconds are expected) and raises
:class:`~collectives.GradingError` with a message that says what was found instead ("... is
None: did you forget `return`?"); then it checks the *content* against the package or against
first principles and raises ``AssertionError`` naming the first thing that is wrong ("after the
last step, rank 3 chunk 1 holds nothing; ..."). nbgrader gives 0 points to a test cell that
raises anything, so both kinds simply fail the cell, with a message the learner can act on.

Checks and helpers
------------------
``check_schedule(answer, collective, n, ...)``
    a schedule (a list of steps, or a :class:`~collectives.Schedule`): form, ranks and chunks
    in range, an optional neighbour rule ("ring": rank r sends only to r + 1), ``verify`` plus a
    numeric :func:`~collectives.simulate` against first principles, step count, sends per step.
    When it is wrong, a reference algorithm is replayed beside it to say after which step and
    on which rank and chunk the two first differ.
``check_number``, ``check_close``, ``check_reference``
    one real number; the same within a relative tolerance of a value; of the value a function
    of the package returns (``"analytic.ring_all_gather"``, ``"busbw"``, ...).
``call(function, *args)``
    call a learner's function, naming the call if it raises.
``step_states(schedule)``, ``describe_slot(content, n_ranks)``
    the symbolic content of every slot before and after each step, in words.
``schedule_seconds(algorithm, n, nbytes, ...)``
    :func:`collectives.time` of a catalogue algorithm on a ring, chain or switch.
``check_choice``, ``fastest_name``, ``dispatch_seconds``
    a name among choices; the algorithm :func:`collectives.algorithms.fastest` picks; the time
    of an MoE dispatch.
``check_shape``
    a tuple of ints (a slice shape such as ``(8, 16)``) against a value or the package's.
``recheck(*checks)``
    run checks in a fresh ``python -I`` process (below).
``call(function, *args, isolated=True, allow=..., forbid=...)``, ``run_isolated(...)``
    re-run a learner's function from its source code in a process where ``collectives``
    cannot be imported, or only the parts a task allows (below, "Tasks solved without the
    package" and "Forbidden names").
``slice_hops``, ``slice_diameter``, ``slice_bisection_bandwidth``, ``v5e_axis_seconds``,
``v5e_all_reduce_seconds``, ``best_v5e_slice_shape``, ``wrapped_axis_for``
    the package's answers (:mod:`collectives.measures`, :func:`collectives.time` on the v5e
    preset) to the notebook on TPU slices, from plain arguments.
``hierarchical_level_seconds``, ``hierarchical_bottleneck``, ``pipelined_hierarchical_seconds``,
``hierarchical_segments_needed``, ``mesh_step_seconds``, ``rail_placement``,
``placement_slowdown``, ``check_placement``, ``misplacement_ratio``,
``rail_all_reduce_seconds``, ``sharp_or_ring``, ``superpod_count``
    the package's answers (:func:`collectives.time` on the DGX H100 preset,
    :func:`collectives.hardware.superpod_plan`) to the notebook on GPU clusters, and the check
    of a placement of a mesh on its GPUs, from plain arguments.
``check_e4m3_values``, ``check_e4m3_codes``, ``check_delayed_scales``,
``check_fp8_all_reduce``, ``flushing_ranks``, ``check_flushing_ranks``
    the checks of the notebook on FP8 (E4M3 codes and values, delayed scales, an FP8
    all-reduce, a count of ranks) against :mod:`collectives.fp8` and first principles.
``plan_tasks.check_step_collectives``, ``.check_ep_all_to_all``, ``.check_memory_per_device``,
``.check_layout_choice``
    the checks of the notebook on planning a training run (a step's collectives, memory per
    device, a layout chosen under a memory limit) against :mod:`collectives.plan`.

Modules: :mod:`~collectives.grading.checks` (plain answers: numbers, choices, shapes, ``call``,
and the words for a learner's value), :mod:`~collectives.grading.diagnosis` (schedules: form,
neighbour rules, first-principles check, step-by-step comparison with a reference),
``collectives.grading.recheck`` (the isolated re-check; the package's name ``recheck`` is its
function), :mod:`~collectives.grading.isolation` (a learner's function re-run without the
package; its program is ``learner_process.py``, a script run by its path),
:mod:`~collectives.grading.slices` (the answers of the notebook on TPU slices) and
:mod:`~collectives.grading.clusters` (those of the notebook on GPU clusters) and
:mod:`~collectives.grading.fp8_tasks` (those of the notebook on FP8). This package re-exports
their public names.

Tamper resistance, and its limits
---------------------------------
A learner's code runs in the same kernel as the tests, before them. The hidden tests of the
course's notebooks therefore (1) re-load this package from disk with ``importlib.reload``,
which re-executes each of its modules too and so restores every function defined in them, and
(2) hand the learner's answers to :func:`recheck`,
which converts them to plain data (JSON of ints, floats, strings and lists) and runs the checks
in a new interpreter started with ``sys.executable -I`` that imports ``collectives`` from a
private, read-only copy of the package (``recheck.package_copy``: a new temporary directory
holding only ``collectives/``, compiled, its files hashed and compared with the package's before
every use, replaced when anything differs). The verdict comes back on the subprocess's stdout, tagged with a
random nonce.

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

It does not defend against, by itself (the grading sandbox, :mod:`.sandbox`, covers the
file, network and resource items when autograding runs in it, as ``exercises/`` configures;
an instructor who opts out of the sandbox should grade in a disposable container or VM):

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
names of the modules and library objects it uses, and sent as plain text and JSON to a fresh
``sys.executable -I`` process, the *learner's process* (``learner_process.py``, run by its
path). Before it runs any of the learner's code, that process removes every ``collectives``
module from ``sys.modules`` and every ``sys.path`` entry that holds the package (except
site-packages, where a wheel install puts it beside numpy), and puts first
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
used; answers that lie about equality (they are re-encoded as plain values in the learner's
process); and, as before, everything done to the kernel's state (only source text and plain
values leave it).

It does not stop (the sandbox below bounds what such code can reach): code written to get round it, in the
learner's process (removing the finder from ``sys.meta_path``, loading the package's files
with ``importlib.util`` or ``exec``, reading them as text) or in the kernel (patching
``inspect.getsource``, ``subprocess`` or ``json`` to send other code: that code must still run
without the package); the package's source copied into the notebook; reading any file the
grading account can reach (the solutions, the gradebook); exhausting memory in the learner's
process (its time is bounded by ``recheck``'s timeout). The grading kernel itself runs under
bubblewrap (:mod:`collectives.grading.sandbox`, ``c.Execute.kernel_name =
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
    "check_schedule", "check_number", "check_close", "check_reference", "check_choice",
    "call", "fastest_name", "dispatch_seconds", "step_states", "describe_slot",
    "schedule_seconds", "recheck", "NEIGHBOUR_RULES", "run_isolated", "NO_PACKAGE",
    "FORBIDDEN", "SCHEDULE_TOOLS",
    "check_shape", "slice_hops", "slice_diameter", "slice_bisection_bandwidth",
    "v5e_axis_seconds", "v5e_all_reduce_seconds", "best_v5e_slice_shape", "wrapped_axis_for",
    "hierarchical_level_seconds", "hierarchical_bottleneck", "pipelined_hierarchical_seconds",
    "hierarchical_segments_needed", "mesh_step_seconds", "rail_placement", "placement_slowdown",
    "check_placement", "misplacement_ratio", "rail_all_reduce_seconds", "sharp_or_ring",
    "superpod_count", "check_e4m3_values", "check_e4m3_codes", "check_delayed_scales",
    "check_fp8_all_reduce", "flushing_ranks", "check_flushing_ranks",
]


def _load(name):
    """This package's module ``name``, executed from its file now.

    Executing it again when it was imported before is what makes ``importlib.reload`` of this
    package restore every function of every module. It is looked up in ``sys.modules``, not as
    an attribute of this package, which a notebook may have rebound.
    """
    full_name = f"{__name__}.{name}"
    if full_name in sys.modules:
        return importlib.reload(sys.modules[full_name])
    return importlib.import_module(full_name)


# in dependency order, so that each module imports the fresh copies of those before it
checks = _load("checks")
isolation = _load("isolation")
diagnosis = _load("diagnosis")
slices = _load("slices")
clusters = _load("clusters")
fp8_tasks = _load("fp8_tasks")
plan_tasks = _load("plan_tasks")
_load("recheck")

from .checks import (call, check_choice, check_close, check_number,  # noqa: E402
                     check_reference, check_shape, dispatch_seconds, fastest_name,
                     schedule_seconds)
from .diagnosis import NEIGHBOUR_RULES, check_schedule, describe_slot, step_states  # noqa: E402
from .isolation import FORBIDDEN, NO_PACKAGE, SCHEDULE_TOOLS, run_isolated  # noqa: E402
from .slices import (best_v5e_slice_shape, slice_bisection_bandwidth,  # noqa: E402
                     slice_diameter, slice_hops, v5e_all_reduce_seconds, v5e_axis_seconds,
                     wrapped_axis_for)
from .clusters import (check_placement, hierarchical_bottleneck,  # noqa: E402
                       hierarchical_level_seconds, hierarchical_segments_needed,
                       mesh_step_seconds, misplacement_ratio, pipelined_hierarchical_seconds,
                       placement_slowdown, rail_all_reduce_seconds, rail_placement,
                       sharp_or_ring, superpod_count)
from .fp8_tasks import (check_delayed_scales, check_e4m3_codes,  # noqa: E402
                        check_e4m3_values, check_flushing_ranks, check_fp8_all_reduce,
                        flushing_ranks)
from .recheck import recheck  # noqa: E402  (the function: it hides the module's name here)
