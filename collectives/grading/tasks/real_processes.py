"""The checks of the graded notebook on real processes (``exercises/source/real_processes``):
a sweep the learner measured and fitted, a choice made from it, broken runs diagnosed, and a
ring all-reduce written with torch.distributed, run on real local processes.

**The sweep and its fit.** The learner runs :func:`collectives.dist.sweep` of
``ring_all_reduce(4)`` and torch's own all-reduce on their machine, and records the table
(``MEASUREMENTS``: rows ``(nbytes, schedule_seconds, torch_seconds)``). No check here
depends on a time measured at grading: :func:`recorded` reads the table as plain data,
:func:`check_sweep` asks only that it be a plausible ring sweep (sizes spanning a factor 256
and more, times that grow from the smallest size to the largest, and a best fit with a
positive latency and per-byte time for both columns), and the fit and the choice are
checked on the numbers recorded. The model is the ring all-reduce's alpha-beta cost,
``2(n-1) alpha + 2(n-1)/n S beta`` (:func:`ring_model_seconds`); a fit is judged by the root
mean square of its relative errors on the data (:func:`relative_rms`), no worse than the
least possible, which :func:`reference_fit` (weighted least squares) attains
(:func:`check_fit`; on exact data, within :data:`FIT_FLOOR` of it). The choice between the
Schedule and torch's all-reduce at a size is judged by the times the best fits of the two
columns predict there (:func:`check_choice`): any choice as fast as the faster is right;
:func:`choice_cases` asks only sizes inside each sweep, where one side wins by more than the
fits miss the data by (:func:`choice_margin`). :func:`fit_cases` and :func:`choice_cases` add
synthetic sweeps drawn from the course seed (:mod:`collectives.grading.cohort`), made from an
alpha-beta model with a few per cent of noise, where either side may win: a function that
only works on one table fails there.

**Broken runs.** :func:`broken_run` renders what :func:`collectives.dist.run` of
``ring_all_reduce(n)`` prints when one rank fails at one step with the launcher's fault
injection (:data:`collectives.dist.launch.FAULTS`): ``"die"`` (the rank's process exits),
``"hang"`` (it never posts the step's messages) or ``"mismatch"`` (it sends a message one
chunk too long), with the launcher's own message builders
(:func:`collectives.dist.launch.failure_message`, :func:`~collectives.dist.launch
.hang_message`). A hang is reproduced by :func:`hang_positions`: a rank completes a step when
every peer it exchanges with in that step has posted it (gloo's send completes only once the
receive is posted), so the ranks next to the hung one stop at its step and the others a step
or more later; a mismatch is reported by the rank that received the message (gloo aborts
there), not by the one that sent it. The tests of the package hold these renderings to real
runs. :func:`check_diagnosis` checks a learner's ``(rank, step, kind)``;
:func:`diagnosis_cases` draws the hidden cases from the course seed, and
:func:`broken_reports` renders each with a job label, Schedule name, chunk size and end of a
hang drawn from the seed as well, so that no table of renderings made beforehand holds them
(what stays open is what :mod:`collectives.grading.cohort` documents: code that keeps running
in the grading kernel while a test cell grades, such as a thread, sees that cell's key).

**The ring.** :func:`run_on_ranks` re-runs a learner's ``ring_all_reduce(tensor)`` from its
source code (:func:`collectives.grading.isolation.bundle`) in ``world_size`` processes forked
from one fresh ``python -I`` process started on this file (run by its path: the worker half
below imports only the standard library, numpy and torch, once, and makes ``collectives``
unimportable with the finder of :mod:`~collectives.grading.isolation.learner_process` before
the learner's code runs). The processes meet through a ``FileStore`` in a temporary directory
and talk over gloo on the loopback interface. In each worker, before the learner's function
is built, every collective of ``torch.distributed`` (``all_reduce``, ``reduce_scatter*``,
``all_gather*``, ``broadcast``, ``all_to_all*``, ``reduce``, ``gather``, ``scatter``, the
``*_object`` ones and the process group's own methods) is replaced by a function that records
the call and raises, and ``isend`` (which ``send`` and ``batch_isend_irecv`` go through)
counts the bytes each rank sends. Then the function runs on each case's inputs (small
integers from :func:`pattern`, exact in every dtype), the originals are put back, and
``torch.distributed.all_reduce`` runs on the same inputs as the library's answer.
:func:`run_on_ranks` returns a plain report (outputs, torch's outputs, bytes sent, forbidden
calls, the first error); :func:`check_ring_all_reduce` runs on that report in the isolated
re-check (:func:`collectives.grading.recheck`, as a ``check_reference`` whose reference is
``"grading.processes.check_ring_all_reduce"``, the notebook's name: the compatibility module
``collectives.grading.processes``): the result against the sum over ranks and against
torch's, no collective called, no rank sending more than the ``2(n-1)/n S`` bytes of a
ring (:func:`ring_all_reduce_bytes_per_rank`: the least any all-reduce can send from its
busiest rank, so an all-reduce that sends no more than the ring scores too), and the busiest
rank sending no less: a sum reached with fewer counted bytes came by a route the counting
does not see (torch's functional collectives, ``torch.distributed._functional_collectives``,
reach the backend through ``torch.ops._c10d_functional`` without touching the replaced
functions).

This file is both a module (the kernel's side) and the ranks' program (run by its path; the
worker's side below imports nothing of the package, and the kernel's side imports the
package's modules inside its functions only, so that running the file as a program needs
none of them).

What the ranks' run needs from a sandbox around the kernel: starting processes, a writable
temporary directory, and TCP on the loopback interface (gloo's only transport on Linux); no
other network. What it does not stop: learner code that works around the counting inside its
own worker (restoring the real functions, writing to the report file): see
:mod:`collectives.grading`. Left out: any check of a recorded time against this machine's
(a table made up to look like a ring passes :func:`check_sweep`; the notebook asks for the
learner's own run, and the grade says only that the fit and the choice follow from it).
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

__all__ = [
    "SWEEP_WORLD_SIZE",
    "MIN_SIZES",
    "MIN_SPAN",
    "COLUMNS",
    "FIT_SLACK",
    "FIT_FLOOR",
    "CHOICES",
    "ring_model_seconds",
    "reference_fit",
    "relative_rms",
    "recorded",
    "check_sweep",
    "sweep_columns",
    "measurements_line",
    "check_fit",
    "fit_cases",
    "predicted_seconds",
    "check_choice",
    "choice_cases",
    "CHOICE_MARGIN",
    "choice_margin",
    "GLOO_SIZE_MISMATCH",
    "DIE_EXIT_CODE",
    "BROKEN_CHUNK_BYTES",
    "hang_positions",
    "broken_run",
    "broken_inputs",
    "broken_reports",
    "check_diagnosis",
    "diagnosis_cases",
    "diagnosis_examples",
    "ring_cases",
    "run_on_ranks",
    "check_ring_all_reduce",
    "ring_all_reduce_bytes_per_rank",
    "pattern",
    "FORBIDDEN",
    "WORKER",
    "LEARNER_PROCESS",
]

#: this file: the program that forks every rank (``python -I WORKER <dir>``)
WORKER = os.path.abspath(__file__)
#: torch.distributed functions a point-to-point task may not call
FORBIDDEN = (
    "all_reduce",
    "all_reduce_coalesced",
    "reduce",
    "broadcast",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_single",
    "all_gather_coalesced",
    "_all_gather_base",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "reduce_scatter_single",
    "_reduce_scatter_base",
    "all_to_all",
    "all_to_all_single",
    "gather",
    "scatter",
    "all_gather_object",
    "gather_object",
    "broadcast_object_list",
    "scatter_object_list",
)
#: the same, as methods of a torch ProcessGroup
_GROUP_METHODS = (
    "allreduce",
    "allreduce_coalesced",
    "reduce",
    "broadcast",
    "allgather",
    "allgather_into_tensor_coalesced",
    "_allgather_base",
    "reduce_scatter",
    "_reduce_scatter_base",
    "reduce_scatter_tensor_coalesced",
    "alltoall",
    "alltoall_base",
    "gather",
    "scatter",
)
#: the learner's process program, whose finder and namespace builder the ranks use
LEARNER_PROCESS = os.path.join(
    os.path.dirname(os.path.dirname(WORKER)), "isolation", "learner_process.py"
)


def pattern(rank, length, dtype):
    """Rank ``rank``'s input: small integers (-3..8), exact in any dtype and sum."""
    i = np.arange(length, dtype=np.int64)
    return ((i * 5 + rank * 3) % 7 + (rank % 3) - 3).astype(dtype)


def ring_all_reduce_bytes_per_rank(nbytes, world_size):
    """Bytes every rank sends in a ring all-reduce of an ``nbytes`` buffer: 2(n-1)/n S
    (n - 1 reduce-scatter and n - 1 all-gather steps, one S/n chunk each)."""
    return 2 * (world_size - 1) * nbytes / world_size


# ---- the sweep the learner recorded, and its fit ---------------------------------------------

#: the ranks of the notebook's sweep (``ring_all_reduce(4)`` and torch's all-reduce)
SWEEP_WORLD_SIZE = 4
#: the fewest sizes a recorded sweep has, and the factor its sizes span at least
MIN_SIZES, MIN_SPAN = 5, 256
#: the two columns of a recorded row after the size, as the messages name them
COLUMNS = ("ring_all_reduce (your Schedule)", "torch.distributed.all_reduce")
#: how much worse than the least possible a fit's relative error may be: 0.1 % of it, and at
#: least :data:`FIT_FLOOR`
FIT_SLACK = 1e-3
#: the root mean square relative error a fit may always add to the least: 1e-5 of the times,
#: 50 times below the resolution of a sweep recorded to 4 significant digits (up to 5e-4
#: relative), so that on an exact model (least ~1e-16) a fit right to 1e-11 (an iterative
#: fit's tolerance), or rounded to 6 digits, scores
FIT_FLOOR = 1e-5
#: the two choices of :func:`check_choice`
CHOICES = ("schedule", "torch")


def ring_model_seconds(nbytes, alpha, beta, world_size):
    """The ring all-reduce's alpha-beta time: ``2(n-1) alpha + 2(n-1)/n S beta`` (``alpha``
    seconds per step, ``beta`` seconds per byte; numpy arrays of ``nbytes`` too)."""
    n = int(world_size)
    return 2 * (n - 1) * alpha + 2 * (n - 1) / n * np.asarray(nbytes, dtype=np.float64) * beta


def _columns(nbytes, world_size):
    n = int(world_size)
    s = np.asarray(nbytes, dtype=np.float64)
    return np.stack([np.full_like(s, 2.0 * (n - 1)), 2.0 * (n - 1) / n * s], axis=1)


def reference_fit(nbytes, seconds, world_size):
    """``(alpha, beta)`` of :func:`ring_model_seconds` that fits ``seconds`` at ``nbytes``
    with the least root mean square relative error (least squares on the rows divided by the
    measured times); not constrained to be positive."""
    t = np.asarray(seconds, dtype=np.float64)
    a = _columns(nbytes, world_size) / t[:, None]
    (alpha, beta), *_ = np.linalg.lstsq(a, np.ones_like(t), rcond=None)
    return float(alpha), float(beta)


def relative_rms(alpha, beta, nbytes, seconds, world_size):
    """The root mean square of ``(model - measured) / measured`` over the sizes."""
    t = np.asarray(seconds, dtype=np.float64)
    model = ring_model_seconds(nbytes, alpha, beta, world_size)
    return float(np.sqrt(np.mean(((model - t) / t) ** 2)))


def _plain_number(value, what):
    """``value`` as a float if it is one real number (int, float, numpy scalar; not bool),
    else a GradingError. Written out here rather than with :func:`~collectives.grading.checks
    .check_number`, so that the visible tests' reading of a table does not depend on a checks
    module the notebook may have patched."""
    from ...errors import GradingError

    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise GradingError(f"{what} should be a number, but it is a {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number):
        raise GradingError(f"{what} is {number!r}, not a finite number")
    return number


def recorded(measurements, what="MEASUREMENTS"):
    """``measurements`` as plain rows ``[nbytes, schedule_seconds, torch_seconds]`` (int,
    float, float), sorted by size; a :class:`~collectives.GradingError` saying what is
    wrong with its form otherwise."""
    from ...errors import GradingError

    if isinstance(measurements, np.ndarray):
        measurements = measurements.tolist()
    if isinstance(measurements, (str, bytes, dict)) or not isinstance(measurements, (list, tuple)):
        raise GradingError(
            f"{what} should be a list of rows (nbytes, schedule_seconds, torch_seconds), but it "
            f"is a {type(measurements).__name__}"
        )
    rows = []
    for i, row in enumerate(list(measurements)):
        if isinstance(row, np.ndarray):
            row = row.tolist()
        if (
            isinstance(row, (str, bytes, dict))
            or not isinstance(row, (list, tuple))
            or len(row) != 3
        ):
            raise GradingError(
                f"{what}[{i}] should be a row (nbytes, schedule_seconds, torch_seconds), but it "
                f"is a {type(row).__name__}"
                + (f" of {len(row)}" if isinstance(row, (list, tuple)) else "")
            )
        size = _plain_number(row[0], f"the nbytes of {what}[{i}]")
        if not size.is_integer() or size < 1:
            raise GradingError(f"the nbytes of {what}[{i}] is {size!r}: a positive whole number")
        times = [
            _plain_number(v, f"the {c} seconds of {what}[{i}]") for v, c in zip(row[1:], COLUMNS)
        ]
        rows.append([int(size), times[0], times[1]])
    return sorted(rows)


def check_sweep(measurements, what="MEASUREMENTS", world_size=SWEEP_WORLD_SIZE):
    """Check that a recorded sweep (plain rows of :func:`recorded`) is a plausible sweep of a
    ring all-reduce on ``world_size`` ranks: at least :data:`MIN_SIZES` distinct sizes,
    multiples of ``4 world_size`` bytes (float32 in ``world_size`` chunks), spanning a factor
    :data:`MIN_SPAN`; positive times; in each column the largest size slower than the
    smallest; and each column's :func:`reference_fit` with a positive alpha and beta. Never
    a comparison with a time measured here. Returns 1.0; an ``AssertionError`` says what is
    implausible."""
    rows = recorded(measurements, what)
    sizes = [r[0] for r in rows]
    again = (
        "; run the sweep again (on a machine that is not busy with something else, with "
        "repeats=3) and record what it prints"
    )
    if len(set(sizes)) != len(sizes):
        raise AssertionError(f"{what} has the size {_repeated(sizes)} bytes twice")
    if len(rows) < MIN_SIZES:
        raise AssertionError(f"{what} has {len(rows)} sizes; record at least {MIN_SIZES}")
    unit = 4 * int(world_size)
    odd = [s for s in sizes if s % unit]
    if odd:
        raise AssertionError(
            f"{what} has {odd[0]} bytes, which a float32 ring all-reduce on {world_size} "
            f"ranks cannot run (sizes are multiples of {unit} bytes)"
        )
    if sizes[-1] < MIN_SPAN * sizes[0]:
        raise AssertionError(
            f"{what} spans {sizes[0]} to {sizes[-1]} bytes; a fit of the latency and of the "
            f"time per byte needs sizes spanning a factor {MIN_SPAN} at least"
        )
    for c, column in enumerate(COLUMNS, start=1):
        times = [r[c] for r in rows]
        if min(times) <= 0:
            raise AssertionError(f"{what} records a time of {min(times)!r} s for {column}")
        if times[-1] <= times[0]:
            raise AssertionError(
                f"{what}: {column} takes {times[-1]:.4g} s at {sizes[-1]} bytes, no longer "
                f"than the {times[0]:.4g} s at {sizes[0]} bytes: not a sweep of a ring{again}"
            )
        alpha, beta = reference_fit(sizes, times, world_size)
        if not (alpha > 0 and beta > 0):
            raise AssertionError(
                f"{what}: the best fit of {column}'s times has alpha = {alpha:.3g} s and beta "
                f"= {beta:.3g} s/B, not both positive: not the times of a ring{again}"
            )
    return 1.0


def sweep_columns(measurements):
    """The two columns of a recorded sweep (plain rows of :func:`recorded`) as ``(nbytes,
    seconds, name)``, the Schedule's first: what the fit test fits."""
    sizes = [r[0] for r in measurements]
    return [(sizes, [r[c] for r in measurements], name) for c, name in enumerate(COLUMNS, 1)]


def measurements_line(result):
    """A :func:`collectives.dist.sweep` result of a Schedule and torch's all-reduce as the
    Python line the notebook records: ``MEASUREMENTS = [(nbytes, schedule_seconds,
    torch_seconds), ...]``, times to 4 significant digits."""
    from ...errors import GradingError

    by_size = {}
    for row in result.rows:
        by_size.setdefault(row.size, []).append(row.time_us * 1e-6)
    if not by_size or any(len(times) != 2 for times in by_size.values()):
        raise GradingError("measurements_line needs a sweep of a Schedule and torch (torch=True)")
    lines = [f"    ({size}, {t[0]:.4g}, {t[1]:.4g})," for size, t in sorted(by_size.items())]
    return "MEASUREMENTS = [\n" + "\n".join(lines) + "\n]"


def _repeated(values):
    seen = set()
    for v in values:
        if v in seen:
            return v
        seen.add(v)
    return None


def _pair(answer, what, names):
    """``answer`` as a pair of floats; a GradingError for another form."""
    from ...errors import GradingError
    from ..checks import check_number, in_words

    if isinstance(answer, np.ndarray):
        answer = answer.tolist()
    if (
        isinstance(answer, (str, bytes, dict))
        or not isinstance(answer, (list, tuple))
        or len(answer) != 2
    ):
        raise GradingError(
            f"{what} should be a pair ({', '.join(names)}), but it is {in_words(answer)}"
        )
    return tuple(check_number(v, f"the {name} of {what}") for v, name in zip(answer, names))


def check_fit(answer, what, nbytes, seconds, world_size, *, rel=FIT_SLACK):
    """``answer``, a fit ``(alpha, beta)`` of :func:`ring_model_seconds` to ``seconds``
    measured at ``nbytes`` on ``world_size`` ranks, judged by how well it explains them:
    alpha and beta positive, and its :func:`relative_rms` no more than ``1 + rel`` times the
    least possible (:func:`reference_fit`'s) plus :data:`FIT_FLOOR` (on an exact model the
    least is about 1e-16: the floor, not the factor, then decides). Returns 1.0."""
    alpha, beta = _pair(answer, what, ("alpha", "beta"))
    if not (alpha > 0 and beta > 0):
        raise AssertionError(
            f"{what} is alpha = {alpha!r} s, beta = {beta!r} s/B: a latency per step and a "
            "time per byte are positive"
        )
    mine = relative_rms(alpha, beta, nbytes, seconds, world_size)
    best = relative_rms(*reference_fit(nbytes, seconds, world_size), nbytes, seconds, world_size)
    if mine > best * (1 + rel) + FIT_FLOOR:
        model = ring_model_seconds(nbytes, alpha, beta, world_size)
        t = np.asarray(seconds, dtype=np.float64)
        worst = int(np.argmax(np.abs(model - t) / t))
        raise AssertionError(
            f"{what} is alpha = {alpha:.6g} s, beta = {beta:.6g} s/B: the model "
            f"2(n-1) alpha + 2(n-1)/n S beta misses the measured times by {mine * 100:.3g} % "
            f"(root mean square of the relative errors), more than the best fit's "
            f"{best * 100:.3g} % allows (a fit may be 0.1 % of that above it, and "
            f"{FIT_FLOOR * 100:g} % in any case); "
            f"the largest miss is at {int(nbytes[worst])} bytes, {model[worst]:.4g} s for "
            f"{t[worst]:.4g} s measured"
        )
    return 1.0


def _log_uniform(generator, low, high):
    return float(f"{math.exp(generator.uniform(math.log(low), math.log(high))):.3g}")


def _noisy_sweep(generator, world_size, sizes, alpha, beta, noise=0.04):
    """Times of :func:`ring_model_seconds` at ``sizes`` with multiplicative noise, rounded to
    4 significant digits."""
    model = ring_model_seconds(sizes, alpha, beta, world_size)
    jitter = np.exp(generator.normal(0.0, noise, size=len(sizes)))
    return [float(f"{v:.4g}") for v in model * jitter]


def _draw_sizes(generator, world_size):
    factor = int(generator.choice([2, 4]))
    count = int(generator.integers(6, 10))
    first = 4 * world_size * int(generator.choice([16, 64, 256]))
    return [first * factor**i for i in range(count)]


def _both_terms_matter(sizes, alpha, beta, world_size):
    """The latency term is at least 30 % of the time at the smallest size, the bandwidth term
    at least 30 % at the largest: a fit must get both right."""
    n = world_size
    lat = 2 * (n - 1) * alpha
    bw = 2 * (n - 1) / n * np.asarray([sizes[0], sizes[-1]], dtype=np.float64) * beta
    return lat >= 0.3 * (lat + bw[0]) and bw[1] >= 0.3 * (lat + bw[1])


def fit_cases(count=3, course_seed=None):
    """The hidden fit test's sweeps beside the learner's own, ``(nbytes, seconds,
    world_size)``: fixed ones (exact, and with noise on 8 ranks), then ``count`` drawn from
    the course seed (3 to 8 ranks, 6 to 9 sizes, a latency of 5 us to 1 ms a step, 0.1 to 10
    GB/s, 4 % noise), in each of which both terms of the model matter and the best fit is
    positive."""
    from .. import cohort

    fixed_gen = np.random.default_rng(2026)
    sizes4 = [4096 * 4**i for i in range(6)]
    sizes8 = [2048 * 2**i for i in range(9)]
    fixed = [
        (sizes4, [float(f"{v:.6g}") for v in ring_model_seconds(sizes4, 5e-5, 1e-9, 4)], 4),
        (sizes8, _noisy_sweep(fixed_gen, 8, sizes8, 2e-4, 2.5e-9), 8),
    ]

    def draw(generator):
        for _ in range(50):
            n = int(generator.integers(3, 9))
            sizes = _draw_sizes(generator, n)
            alpha = _log_uniform(generator, 5e-6, 1e-3)
            beta = 1 / _log_uniform(generator, 1e8, 1e10)
            if not _both_terms_matter(sizes, alpha, beta, n):
                continue
            seconds = _noisy_sweep(generator, n, sizes, alpha, beta)
            a, b = reference_fit(sizes, seconds, n)
            if a > 0 and b > 0:
                return (sizes, seconds, n)
        return None

    return cohort.cases("test_fit_alpha_beta", fixed, draw, count, course_seed)


# ---- the choice: the Schedule or torch's all-reduce ------------------------------------------


def predicted_seconds(measurements, nbytes, world_size=SWEEP_WORLD_SIZE):
    """``{"schedule": s, "torch": s}``: the times at ``nbytes`` of the best fits
    (:func:`reference_fit`) of the two columns of a recorded sweep."""
    rows = recorded(measurements)
    sizes = [r[0] for r in rows]
    out = {}
    for c, choice in enumerate(CHOICES, start=1):
        alpha, beta = reference_fit(sizes, [r[c] for r in rows], world_size)
        out[choice] = float(ring_model_seconds(nbytes, alpha, beta, world_size))
    return out


def check_choice(answer, what, measurements, nbytes, *, rel=1e-9):
    """``answer``, ``"schedule"`` or ``"torch"``: the all-reduce to run on ``nbytes`` given a
    recorded sweep, judged by the times the best fits of its two columns predict at
    ``nbytes`` (:func:`predicted_seconds`): no slower than the faster, within ``rel``.
    Returns 1.0."""
    from ...errors import GradingError
    from ..checks import in_words, show

    if not isinstance(answer, str):
        raise GradingError(f"{what} should be 'schedule' or 'torch', but it is {in_words(answer)}")
    if answer not in CHOICES:
        raise AssertionError(f"{what} is {show(answer)}, which is not 'schedule' or 'torch'")
    times = predicted_seconds(measurements, nbytes)
    best = min(times.values())
    if times[answer] > best * (1 + rel):
        other = CHOICES[1 - CHOICES.index(answer)]
        raise AssertionError(
            f"{what} is {answer!r}: at {show(nbytes)} bytes the best fits of the sweep's "
            f"columns predict {times[answer] * 1e6:.4g} us for it and {times[other] * 1e6:.4g} "
            f"us for {other!r}"
        )
    return 1.0


#: the least margin by which one side's predicted time beats the other's at a size asked
CHOICE_MARGIN = 0.05


def choice_margin(measurements, world_size=SWEEP_WORLD_SIZE):
    """How much faster one side must be predicted at a size for :func:`choice_cases` to ask
    it: the larger of :data:`CHOICE_MARGIN` and the two best fits' root mean square relative
    errors (:func:`relative_rms`; a closer call is inside what the fits miss by)."""
    rows = recorded(measurements)
    sizes = [r[0] for r in rows]
    misses = []
    for c in (1, 2):
        seconds = [r[c] for r in rows]
        misses.append(
            relative_rms(*reference_fit(sizes, seconds, world_size), sizes, seconds, world_size)
        )
    return max(CHOICE_MARGIN, *misses)


def _clear(measurements, nbytes, margin):
    times = predicted_seconds(measurements, nbytes)
    return max(times.values()) > (1 + margin) * min(times.values())


def choice_cases(measurements, count=3, course_seed=None):
    """The hidden choice test's cases, ``(measurements, nbytes)``, every size inside the
    range its sweep measured (a fit says little beyond it): the learner's recorded sweep at
    its own sizes and at ``count`` sizes drawn from the course seed between its smallest and
    largest, then a fixed synthetic sweep (the model with 2 % noise) in which the Schedule
    wins at large sizes and ``count`` such sweeps drawn (each with a crossover inside its
    sizes), at sizes on both sides; only sizes where one side is predicted faster by more
    than :func:`choice_margin` of its sweep (the larger of 5 % and the fits' rms relative
    errors: a closer call is no question the fits can answer)."""
    from .. import cohort

    mine = recorded(measurements)
    sizes = [r[0] for r in mine]
    generator = cohort.rng("test_choose_all_reduce", course_seed)
    queries = list(sizes) + [
        int(_log_uniform(generator, sizes[0], sizes[-1])) for _ in range(count)
    ]
    margin = choice_margin(mine)
    cases = [(mine, s) for s in queries if _clear(mine, s, margin)]

    def elsewhere(gen, alphas, betas, sizes):
        cols = [_noisy_sweep(gen, 4, sizes, a, b, noise=0.02) for a, b in zip(alphas, betas)]
        return [[s, t0, t1] for s, t0, t1 in zip(sizes, *cols)]

    fixed_sizes = [4096 * 4**i for i in range(7)]
    fixed = elsewhere(np.random.default_rng(7), (3e-4, 2e-5), (2e-10, 1e-9), fixed_sizes)
    for s in (4096, 2**18, 2**22, 2**24):  # its fits cross at about 1.39 MB
        if _clear(fixed, s, choice_margin(fixed)):
            cases.append((fixed, s))

    for _ in range(20 * count):
        if len(cases) >= len(queries) + 4 + 2 * count:
            break
        n_sizes = int(generator.integers(6, 9))
        sweep_sizes = [4096 * 4**i for i in range(n_sizes)]
        alphas = (_log_uniform(generator, 5e-5, 1e-3), _log_uniform(generator, 5e-6, 5e-5))
        betas = (1 / _log_uniform(generator, 1e9, 1e10), 1 / _log_uniform(generator, 1e8, 1e9))
        if generator.integers(2):  # the other way round: torch wins at large sizes
            alphas, betas = alphas[::-1], betas[::-1]
        table = elsewhere(generator, alphas, betas, sweep_sizes)
        a = predicted_seconds(table, sweep_sizes[0])
        b = predicted_seconds(table, sweep_sizes[-1])
        if (a["schedule"] < a["torch"]) == (b["schedule"] < b["torch"]):
            continue  # no crossover inside the sweep
        picked = [int(_log_uniform(generator, sweep_sizes[0], sweep_sizes[-1])) for _ in range(3)]
        margin = choice_margin(table)
        cases += [
            (table, s)
            for s in (sweep_sizes[0], sweep_sizes[-1], *picked)
            if _clear(table, s, margin)
        ]
    return cases


# ---- broken runs: what a failing rank looks like ---------------------------------------------

#: what gloo (torch 2.13.0's CPU build) prints when a message is longer than the receive
#: posted for it, as the receiving rank aborts (seen in a run of the launcher's "mismatch"
#: fault; gloo/transport/tcp/pair.cc); ``{sent}`` and ``{posted}`` in bytes
GLOO_SIZE_MISMATCH = (
    "terminate called after throwing an instance of 'gloo::EnforceNotMet'\n"
    "  what():  [enforce fail at /__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/"
    "pair.cc:456] op.preamble.length <= op.nbytes. {sent} vs {posted}. Received data size "
    "doesn't match expected size. Is there a distributed collective mismatch in your code?"
)
#: the exit code of a rank that the launcher's "die" fault ends (collectives.dist.worker)
DIE_EXIT_CODE = 70
#: bytes of one chunk of the broken runs' inputs (two float32 elements a chunk)
BROKEN_CHUNK_BYTES = 8


def _ring(world_size):
    from ...algorithms import ring_all_reduce

    return ring_all_reduce(int(world_size))


def _peers(schedule, step, rank):
    """The ranks ``rank`` sends to or receives from in ``step`` (itself excluded)."""
    s = schedule.steps[step]
    src, dst = np.asarray(s.src), np.asarray(s.dst)
    peers = set(dst[src == rank].tolist()) | set(src[dst == rank].tolist())
    peers.discard(rank)
    return sorted(int(p) for p in peers)


def hang_positions(schedule, rank, step):
    """Where every rank of ``schedule`` stops when ``rank`` never posts the messages of
    ``step``: a list, per rank, of the step it waits in (``schedule.n_steps``: it ran every
    step and waits in the final barrier). A rank completes a step when it and every peer it
    exchanges with in that step have posted it (a gloo send completes only once the receive
    is posted, and the launcher posts a step's receives and sends together)."""
    n, last = schedule.n_ranks, schedule.n_steps
    at = [0] * n
    peers = [[_peers(schedule, k, r) for k in range(last)] for r in range(n)]

    def posted(r, k):
        return at[r] > k or (at[r] == k and not (r == rank and k == step))

    moved = True
    while moved:
        moved = False
        for r in range(n):
            k = at[r]
            if k < last and posted(r, k) and all(posted(q, k) for q in peers[r][k]):
                at[r] += 1
                moved = True
    return at


def broken_run(
    world_size,
    kind,
    rank,
    step,
    *,
    timeout=None,
    stall=None,
    job=0,
    name="ring_all_reduce",
    chunk_bytes=BROKEN_CHUNK_BYTES,
):
    """What ``collectives.dist.run(ring_all_reduce(world_size), inputs)`` raises (its
    :class:`~collectives.DistError`'s text) when rank ``rank`` fails at step ``step`` with
    the launcher's fault ``kind``: ``"die"``, ``"mismatch"`` (the rank's message one chunk of
    ``chunk_bytes`` too long) or ``"hang"`` (ended by the launch's ``timeout``, default
    :data:`collectives.dist.DEFAULT_TIMEOUT`, or by ``stall`` seconds without progress).
    ``job`` is the job's label in the launch (its position among the jobs of
    :func:`collectives.dist.run_many`) and ``name`` the Schedule's name
    (:meth:`~collectives.Schedule.renamed`). The ranks that failed besides the root cause are
    listed in rank order (a real run lists them in the order it saw them)."""
    import signal

    from ...dist.board import FINISHING, PHASES
    from ...dist.launch import (
        DEFAULT_TIMEOUT,
        exit_reason,
        failure_message,
        hang_message,
        job_text,
    )
    from ...errors import GradingError

    schedule = _ring(world_size)
    n, last = schedule.n_ranks, schedule.n_steps
    if kind not in ("die", "hang", "mismatch") or not 0 <= rank < n or not 0 <= step < last:
        raise GradingError(
            f"no broken run ({world_size}, {kind!r}, {rank}, {step}) (a bug in the test)"
        )
    what = f"schedule {str(name)!r}"

    def where(r, k):
        return job_text(job, what, k, last) if k < last else PHASES[FINISHING]

    if kind == "hang":
        at = hang_positions(schedule, rank, step)
        places = {r: where(r, k) for r, k in enumerate(at)}
        if stall is not None:
            return hang_message(n, "gloo", places, stall=stall)
        return hang_message(n, "gloo", places, timeout=timeout or DEFAULT_TIMEOUT)
    if kind == "die":
        reporter, message = rank, exit_reason(DIE_EXIT_CODE)
    else:
        (reporter,) = _receivers(schedule, step, rank)
        message = (
            exit_reason(-signal.SIGABRT)
            + "; its last output:\n"
            + GLOO_SIZE_MISMATCH.format(sent=2 * int(chunk_bytes), posted=int(chunk_bytes))
        )
    others = [r for r in range(n) if r != reporter]
    return failure_message(
        reporter, n, "gloo", " " + where(reporter, step), "ProcessDied", message, others
    )


def _receivers(schedule, step, rank):
    s = schedule.steps[step]
    src, dst = np.asarray(s.src), np.asarray(s.dst)
    return sorted({int(d) for d in dst[src == rank].tolist() if d != rank})


def broken_inputs(world_size, chunk_bytes=BROKEN_CHUNK_BYTES):
    """The inputs of the broken runs: rank r's row of ``world_size`` float32 chunks of
    ``chunk_bytes`` bytes (two elements by default, :data:`BROKEN_CHUNK_BYTES`), as
    :func:`collectives.dist.run` takes them."""
    n, per_chunk = int(world_size), int(chunk_bytes) // 4
    return np.arange(n * n * per_chunk, dtype=np.float32).reshape(n, -1)


def _report_context(generator, kind):
    """What else a broken run's report says, drawn: the job's label in its launch (0 to 63),
    the Schedule's name (a gradient bucket's, ``grad_bucket_<k>``, k below a million), the
    bytes of a chunk (4 to 4 MB, float32) and what ended a hang (a timeout of 30 to 900 s,
    or 1 to 30 s without progress)."""
    context = {
        "job": int(generator.integers(64)),
        "name": f"grad_bucket_{int(generator.integers(10**6))}",
        "chunk_bytes": 4 * int(generator.integers(1, 10**6 + 1)),
    }
    if kind == "hang":
        if generator.integers(2):
            context["timeout"] = float(generator.integers(30, 901))
        else:
            context["stall"] = round(float(generator.uniform(1.0, 30.0)), 1)
    return context


def broken_reports(cases, label="test_diagnose", course_seed=None):
    """``[(report, case)]``: the :func:`broken_run` of each ``(world_size, kind, rank,
    step)`` in ``cases``, every report with its own job label, Schedule name, chunk bytes
    and end of a hang drawn from the course seed (:func:`collectives.grading.cohort.rng` of
    ``label``), so that no table of the package's renderings holds the reports of a cohort
    (one report's numbers alone are drawn from about 10^13 combinations)."""
    from .. import cohort

    generator = cohort.rng(f"{label} reports", course_seed)
    out = []
    for case in cases:
        n, kind, rank, step = case
        out.append((broken_run(n, kind, rank, step, **_report_context(generator, kind)), case))
    return out


#: what each fault is, in the words of the checks' messages
_KINDS = {
    "die": "a rank died (its process ended during a step)",
    "hang": "a rank hung (it never posted a step's messages)",
    "mismatch": "a rank sent a message longer than its peer expected",
}


def check_diagnosis(answer, what, world_size, kind, rank, step):
    """``answer``, ``(rank, step, kind)``: the rank at fault, the step it failed at and the
    fault (``"die"``, ``"hang"`` or ``"mismatch"``) of :func:`broken_run` ``(world_size,
    kind, rank, step)``. Returns 1.0; an ``AssertionError`` names the first part that is
    wrong (kind, then rank, then step)."""
    from ...errors import GradingError
    from ..checks import in_words, show

    if (
        isinstance(answer, (str, bytes, dict))
        or not isinstance(answer, (list, tuple))
        or len(answer) != 3
    ):
        raise GradingError(
            f"{what} should be a triple (rank, step, kind), but it is {in_words(answer)}"
        )
    their_rank, their_step, their_kind = answer
    for value, name in ((their_rank, "rank"), (their_step, "step")):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise GradingError(
                f"the {name} of {what} should be an int, but it is {in_words(value)}"
            )
    if not isinstance(their_kind, str):
        raise GradingError(
            f"the kind of {what} should be a string, but it is {in_words(their_kind)}"
        )
    if their_kind not in _KINDS:
        raise AssertionError(
            f"the kind of {what} is {show(their_kind)}, not one of 'die', 'hang', 'mismatch'"
        )
    if their_kind != kind:
        raise AssertionError(f"{what} says {their_kind!r}, but in that run {_KINDS[kind]}")
    if int(their_rank) != rank:
        hint = ""
        if kind == "mismatch" and int(their_rank) in _receivers(_ring(world_size), step, rank):
            hint = (
                f" (rank {int(their_rank)} reported the failure: it received the message that "
                "was too long; which rank sent it?)"
            )
        elif kind == "hang":
            hint = " (the ranks that exchange messages with a hung rank stop at its step too)"
        raise AssertionError(f"{what} names rank {int(their_rank)}, but rank {rank} broke{hint}")
    if int(their_step) != step:
        raise AssertionError(
            f"{what} names step {int(their_step)}, but rank {rank} broke at step {step}"
        )
    return 1.0


def diagnosis_cases(count=4, course_seed=None):
    """The hidden diagnosis test's broken runs, ``(world_size, kind, rank, step)`` of
    :func:`broken_run`: fixed ones (each fault; a mismatch whose receiver is rank 0; hangs at
    the first and at the last step), then ``count`` drawn from the course seed (4 to 8 ranks,
    any fault, rank and step)."""
    from .. import cohort

    fixed = [
        (4, "die", 1, 0),
        (5, "mismatch", 4, 2),
        (4, "hang", 0, 0),
        (6, "hang", 3, 9),
        (8, "mismatch", 6, 13),
        (7, "die", 6, 11),
    ]

    def draw(generator):
        n = int(generator.integers(4, 9))
        kind = ("die", "hang", "mismatch")[int(generator.integers(3))]
        return (n, kind, int(generator.integers(n)), int(generator.integers(2 * (n - 1))))

    return cohort.cases("test_diagnose", fixed, draw, count, course_seed)


def diagnosis_examples(course_seed=None):
    """The broken runs the notebook shows (and its visible test checks), ``(world_size, kind,
    rank, step)``: one of each fault, in the order die, mismatch, hang, drawn from the course
    seed (:func:`collectives.grading.cohort.seed`; in a learner's own kernel the practice
    seed), on 4 to 6 ranks, none at a rank or step of 0 (the hidden tests have those)."""
    from .. import cohort

    generator = cohort.rng("diagnose examples", course_seed)
    found = []
    for kind in ("die", "mismatch", "hang"):
        n = int(generator.integers(4, 7))
        found.append(
            (n, kind, int(generator.integers(1, n)), int(generator.integers(1, 2 * (n - 1))))
        )
    return found


# ---- the ring on processes: the cases ---------------------------------------------------------


def ring_cases(count=2, course_seed=None):
    """The hidden ring test's cases, ``(length, dtype)`` on 4 processes: a float32 tensor of
    4000 elements, then ``count`` drawn from the course seed (int64, float64, float32; a
    multiple of 4 elements up to 2000)."""
    from .. import cohort

    def draw(generator):
        dtype = ("int64", "float64", "float32")[int(generator.integers(3))]
        return (4 * int(generator.integers(1, 501)), dtype)

    return cohort.cases("test_ring_all_reduce", [(4000, "float32")], draw, count, course_seed)


# ---- the kernel's side ---------------------------------------------------------------------


def run_on_ranks(function, cases=((8, "float32"),), world_size=4, timeout=90.0):
    """Run the learner's ``function(tensor)`` on ``world_size`` local processes, once per case
    ``(length, dtype)``; returns the plain report described in the module docstring.

    ``function`` is the learner's function or ``collectives.grading.call(function,
    isolated=True)`` (whose bundle is used). Never raises for what the learner's code does:
    a failure, a hang (``timeout`` seconds) or a missing function is the report's
    ``"error"``."""
    from ...errors import GradingError
    from ..isolation.calls import IsolatedCall
    from ..isolation.reading import bundle

    try:
        data = (
            function.bundle
            if isinstance(function, IsolatedCall)
            else bundle(function, name="ring_all_reduce")
        )
    except GradingError as exc:
        return {"world_size": world_size, "cases": [], "error": str(exc)}
    cases = [[int(length), str(dtype)] for length, dtype in cases]
    with tempfile.TemporaryDirectory(prefix="collectives-ranks-") as workdir:
        with open(os.path.join(workdir, "request.json"), "w") as f:
            json.dump(
                {
                    "bundle": data,
                    "cases": cases,
                    "world_size": world_size,
                    "learner_process": LEARNER_PROCESS,
                    "timeout": timeout,
                },
                f,
            )
        from .. import cohort

        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("PYTHON") and k != cohort.ENV  # not the cell's key either
        }
        env.update(OMP_NUM_THREADS="1", GLOO_SOCKET_IFNAME=_loopback() or "lo")
        log = open(os.path.join(workdir, "log.txt"), "wb")
        # one process imports torch once and forks the ranks (four imports of torch would
        # cost seconds of CPU each); its own session, so that cleaning up kills them all
        spawner = subprocess.Popen(
            [sys.executable, "-I", WORKER, workdir],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=workdir,
            env=env,
            start_new_session=True,
        )
        log.close()
        try:
            error = _wait(spawner, workdir, world_size, timeout)
        finally:
            try:
                os.killpg(spawner.pid, 9)
            except ProcessLookupError:
                pass
            spawner.wait()
        report = {"world_size": world_size, "cases": [], "error": error}
        if error is None:
            per_rank = []
            for r in range(world_size):
                with open(os.path.join(workdir, f"out{r}.json")) as f:
                    per_rank.append(json.load(f))
            for i, (length, dtype) in enumerate(cases):
                report["cases"].append(
                    {
                        "length": length,
                        "dtype": dtype,
                        "outputs": [per_rank[r]["cases"][i]["output"] for r in range(world_size)],
                        "torch": [per_rank[r]["cases"][i]["torch"] for r in range(world_size)],
                        "sent": [per_rank[r]["cases"][i]["sent"] for r in range(world_size)],
                        "forbidden": sorted(
                            {
                                name
                                for r in range(world_size)
                                for name in per_rank[r]["cases"][i]["forbidden"]
                            }
                        ),
                    }
                )
        return report


def _loopback():
    import socket

    try:
        return next((n for _, n in socket.if_nameindex() if n.startswith("lo")), None)
    except OSError:
        return None


def _wait(spawner, workdir, n, timeout):
    """None when every rank finished, else the first error in words."""
    deadline = time.monotonic() + timeout
    while True:
        code = spawner.poll()
        errors = sorted(f for f in os.listdir(workdir) if f.startswith("error"))
        if errors or code not in (None, 0):
            time.sleep(0.3)  # let the other ranks write what they saw
            errors = sorted(f for f in os.listdir(workdir) if f.startswith("error"))
            if errors:
                with open(os.path.join(workdir, errors[0])) as f:
                    return json.load(f)["message"]
            with open(os.path.join(workdir, "log.txt"), "rb") as f:
                tail = f.read()[-600:].decode(errors="replace").strip()
            return f"the processes stopped with exit status {code}: {tail}"
        if code == 0:
            return None
        if time.monotonic() > deadline:
            done = {f for f in os.listdir(workdir) if f.startswith("out")}
            waiting = [r for r in range(n) if f"out{r}.json" not in done]
            return (
                f"ring_all_reduce did not finish within {timeout:g} s on {n} "
                f"processes (rank(s) {', '.join(map(str, waiting))} still running): a "
                "deadlock? Two ranks that both wait in a blocking send or recv for each "
                "other never finish; post isend/irecv together (batch_isend_irecv)"
            )
        time.sleep(0.02)


# ---- the check (in the isolated re-check) ----------------------------------------------------


def check_ring_all_reduce(report):
    """Check a :func:`run_on_ranks` report against first principles; returns 1.0.

    Raises AssertionError naming the case, the rank and what is wrong: an error or hang,
    a forbidden collective, a wrong element (the sum over ranks of :func:`pattern`), a
    busiest rank that sent less than the 2(n-1)/n S bytes no all-reduce's busiest rank goes
    below (the result then came by another route than the counted point-to-point messages:
    torch's functional collectives, ``torch.ops.c10d``, ...), or a rank that sent more than
    the ring's 2(n-1)/n S."""
    from ...errors import GradingError

    if not isinstance(report, dict):
        raise GradingError(f"the report of the run on processes is {type(report).__name__}")
    if report.get("error"):
        raise AssertionError(report["error"])
    n = report["world_size"]
    for case in report["cases"]:
        length, dtype = case["length"], np.dtype(case["dtype"])
        label = f"ring_all_reduce on {n} processes, a {dtype.name} tensor of {length} elements"
        if case["forbidden"]:
            raise AssertionError(
                f"{label}: your function called torch.distributed."
                f"{', torch.distributed.'.join(case['forbidden'])}; only point-to-point "
                "operations (send, recv, isend, irecv, batch_isend_irecv) are allowed"
            )
        want = np.sum([pattern(r, length, dtype) for r in range(n)], axis=0, dtype=dtype)
        for r in range(n):
            theirs = np.asarray(case["torch"][r], dtype=dtype)
            if not np.array_equal(theirs, want):
                raise GradingError(
                    f"torch.distributed.all_reduce disagrees with the sum on "
                    f"rank {r} (a bug in the grading, not in your answer)"
                )
        for r in range(n):
            got = case["outputs"][r]
            if got is None or len(got) != length:
                raise AssertionError(
                    f"{label}: rank {r} returned "
                    f"{'nothing' if got is None else f'{len(got)} elements'}"
                    f"; return the tensor, summed in place"
                )
            got = np.asarray(got, dtype=np.float64)
            bad = np.flatnonzero(got != want)
            if bad.size:
                i = int(bad[0])
                raise AssertionError(
                    f"{label}: rank {r} holds {got[i]:g} at element {i}, but the sum over the "
                    f"{n} ranks (torch.distributed.all_reduce gives it too) is {want[i]:g}; "
                    f"{bad.size} of {length} elements differ"
                )
        nbytes = length * dtype.itemsize
        ring = ring_all_reduce_bytes_per_rank(nbytes, n)
        if max(case["sent"]) < ring:
            busiest = int(np.argmax(case["sent"]))
            raise AssertionError(
                f"{label}: your ranks sent fewer bytes than any point-to-point all-reduce can "
                f"(the busiest, rank {busiest}, sent {case['sent'][busiest]} bytes, and no "
                f"all-reduce of S = {nbytes} bytes on {n} ranks sends less than 2(n-1)/n S = "
                f"{ring:g} from its busiest rank): was a collective used? Only bytes sent with "
                "send, isend or batch_isend_irecv count"
            )
        for r in range(n):
            if case["sent"][r] > ring:
                ratio = case["sent"][r] / ring
                raise AssertionError(
                    f"{label}: rank {r} sent {case['sent'][r]} bytes; a ring all-reduce of "
                    f"S = {nbytes} bytes sends 2(n-1)/n S = {ring:g} bytes from every rank "
                    f"(yours is {ratio:.3g} times that)"
                )
    return 1.0


# ---- the worker's side (this file run as a script: no collectives imports) ------------------


def _load_learner_process(path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("_learner_process", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _instrument(dist, c10d, calls, sent):
    """Forbid every collective, count the bytes isend sends; returns the undo list."""
    undo = []

    def forbid(name):
        def refuse(*args, **kwargs):
            calls.append(name)
            raise RuntimeError(
                f"torch.distributed.{name} is a collective; this task allows "
                "point-to-point operations only (send, recv, isend, irecv, "
                "batch_isend_irecv)"
            )

        return refuse

    for module in (dist, c10d):
        for name in FORBIDDEN:
            if hasattr(module, name):
                undo.append((module, name, getattr(module, name)))
                setattr(module, name, forbid(name))
    group_class = getattr(c10d, "ProcessGroup", None)
    for name in _GROUP_METHODS:
        original = vars(group_class).get(name) if group_class is not None else None
        if original is not None:
            try:
                setattr(group_class, name, forbid(f"ProcessGroup.{name}"))
                undo.append((group_class, name, original))
            except (AttributeError, TypeError):
                pass
    real_isend = c10d.isend

    def isend(tensor, *args, **kwargs):
        sent[0] += tensor.numel() * tensor.element_size()
        return real_isend(tensor, *args, **kwargs)

    for module in (dist, c10d):
        undo.append((module, "isend", module.isend))
        module.isend = isend
    return undo


def _spawn(workdir):
    """The spawner: import torch once, make collectives unimportable, fork one process per
    rank, and exit with the first failing rank's status (0 when all succeed)."""
    with open(os.path.join(workdir, "request.json")) as f:
        request = json.load(f)
    lp = _load_learner_process(request["learner_process"])
    lp.make_unimportable()
    import torch
    import torch.distributed

    torch.set_num_threads(1)
    children = {}
    for rank in range(request["world_size"]):
        pid = os.fork()
        if pid == 0:
            try:
                _worker(workdir, rank, request, lp)
            except BaseException as exc:  # anything the rank did not report itself
                _error(workdir, rank, f"rank {rank}: {type(exc).__name__}: {exc}")
                os._exit(4)
        children[pid] = rank
    status = 0
    while children:
        pid, code = os.wait()
        children.pop(pid, None)
        if code and not status:
            status = 1
    os._exit(status)


def _error(workdir, rank, message):
    path = os.path.join(workdir, f"error{rank}.json")
    with open(path + ".tmp", "w") as f:
        json.dump({"message": message}, f)
    os.replace(path + ".tmp", path)


def _worker(workdir, rank, request, lp):
    n = request["world_size"]
    from datetime import timedelta

    import torch
    import torch.distributed as dist
    import torch.distributed.distributed_c10d as c10d

    timeout = timedelta(seconds=request["timeout"])
    store = dist.FileStore(os.path.join(workdir, "store"), n)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=n, timeout=timeout)
    calls, sent = [], [0]
    undo = _instrument(dist, c10d, calls, sent)
    namespace = lp.namespace(request["bundle"])
    function = namespace.get(request["bundle"]["target"])
    results = []
    for length, dtype in request["cases"]:
        x = torch.from_numpy(pattern(rank, length, np.dtype(dtype)))
        calls.clear()
        sent[0] = 0
        label = f"ring_all_reduce(tensor) on rank {rank} of {n}"
        try:
            if not callable(function):
                raise NameError(f"{request['bundle']['target']} is not defined")
            out = function(x)
        except Exception as exc:
            if calls:
                out = None
            else:
                kind = type(exc).__name__
                message = f"{label} raised {kind}: {exc}"
                if kind == "NotImplementedError":
                    message += " (the exercise cell still holds the placeholder)"
                _error(workdir, rank, message)
                os._exit(3)
        if out is None:
            out = x
        results.append(
            {"output": _plain(out, torch), "sent": sent[0], "forbidden": list(dict.fromkeys(calls))}
        )
    for owner, name, original in reversed(undo):
        setattr(owner, name, original)
    for i, (length, dtype) in enumerate(request["cases"]):
        y = torch.from_numpy(pattern(rank, length, np.dtype(dtype)))
        dist.all_reduce(y)
        results[i]["torch"] = y.tolist()
    dist.barrier()
    with open(os.path.join(workdir, f"out{rank}.json.tmp"), "w") as f:
        json.dump({"cases": results}, f)
    os.replace(
        os.path.join(workdir, f"out{rank}.json.tmp"), os.path.join(workdir, f"out{rank}.json")
    )
    sys.stdout.flush()
    os._exit(0)


def _plain(value, torch):
    """A returned tensor (or array, or list) as a list of numbers; None if it is not one."""
    try:
        if isinstance(value, torch.Tensor):
            return value.detach().cpu().reshape(-1).tolist()
        return np.asarray(value, dtype=np.float64).reshape(-1).tolist()
    except Exception:
        return None


if __name__ == "__main__":
    _spawn(sys.argv[1])
