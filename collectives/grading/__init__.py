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
``recheck(*checks)``
    run checks in a fresh ``python -I`` process (below).

Modules: :mod:`~collectives.grading.checks` (plain answers: numbers, choices, ``call``, and
the words for a learner's value), :mod:`~collectives.grading.diagnosis` (schedules: form,
neighbour rules, first-principles check, step-by-step comparison with a reference) and
``collectives.grading.recheck`` (the isolated re-check; the package's name ``recheck`` is its
function). This package re-exports their public names.

Tamper resistance, and its limits
---------------------------------
A learner's code runs in the same kernel as the tests, before them. The hidden tests of the
course's notebooks therefore (1) re-load this package from disk with ``importlib.reload``,
which re-executes each of its modules too and so restores every function defined in them, and
(2) hand the learner's answers to :func:`recheck`,
which converts them to plain data (JSON of ints, floats, strings and lists) and runs the checks
in a new interpreter started with ``sys.executable -I`` that imports ``collectives`` from the
directory this package is in. The verdict comes back on the subprocess's stdout, tagged with a
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
- a ``collectives.py`` or ``numpy.py`` written next to the notebook: ``-I`` keeps the working
  directory (and ``PYTHON*`` variables, and the user site) off the subprocess's ``sys.path``;
- exceptions hidden by IPython hooks (``showtraceback``, ``set_custom_exc``): nbgrader 0.9
  marks the cell failed from the kernel's execute reply.

It does not defend against (real sandboxing is a later issue):

- patching, in the kernel, what the hidden tests themselves run on: the standard library
  (``importlib.reload``, ``subprocess.run``, ``json``, ``sys.executable``, ``builtins``), the
  interpreter or IPython (input or AST transformers that rewrite or drop later cells, patched
  kernel methods), or a thread that re-patches this package between the reload and its use;
- reading or writing files the autograding account can reach (the source notebook with the
  hidden tests, the gradebook);
- a function that returns the right answer by calling the package's own solution
  (``cl.algorithms.ring_all_gather``, ``cl.analytic.ring_all_gather``) or that detects the grader;
- exhausting memory or CPU (nbgrader's per-cell timeout bounds the time only).

Autograde untrusted submissions in a disposable container or VM. The package never prints.
"""

import importlib
import sys

from ..errors import GradingError  # noqa: F401  (collectives.grading.GradingError, as before)

__all__ = [
    "check_schedule", "check_number", "check_close", "check_reference", "check_choice",
    "call", "fastest_name", "dispatch_seconds", "step_states", "describe_slot",
    "schedule_seconds", "recheck", "NEIGHBOUR_RULES",
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
diagnosis = _load("diagnosis")
_load("recheck")

from .checks import (call, check_choice, check_close, check_number,  # noqa: E402
                     check_reference, dispatch_seconds, fastest_name, schedule_seconds)
from .diagnosis import NEIGHBOUR_RULES, check_schedule, describe_slot, step_states  # noqa: E402
from .recheck import recheck  # noqa: E402  (the function: it hides the module's name here)
