"""The entry points: run Schedules, and torch's own collectives, in worker processes.

:func:`run`, :func:`run_many`, :func:`run_torch` and :func:`compare_with_torch` take jobs (a
Schedule with its inputs, or a collective's name with its inputs), check every one before
any process starts (with the errors :func:`collectives.simulate` raises), run the jobs with
the same number of ranks one after the other in one launch
(:func:`~collectives.dist.launch.run_tasks`), and return the outputs in job order, laid out
as :func:`collectives.simulate` lays them out. :func:`device_mesh_groups` builds torch's own
device mesh on worker processes and returns the groups of each of its dimensions, to set
beside :class:`collectives.Mesh`'s.
"""

import numpy as np

from ..errors import CollectivesError
from ..schedule import schedule_arg
from ..semantics import collective_spec
from .launch import (
    DEFAULT_TIMEOUT,
    FAULTS,
    check_backend,
    check_launch,
    resolve_backend,
    run_tasks,
    timeout_seconds,
)
from .programs import check_segments, prepare
from .torch_ops import compare, torch_job

__all__ = [
    "run",
    "run_many",
    "run_torch",
    "compare_with_torch",
    "device_mesh_groups",
    "check_fault",
]


def _schedule_job(schedule, inputs, n_segments=1):
    """A run of ``schedule`` on ``inputs``, checked (and laid out) before any process starts."""
    n_segments = check_segments(n_segments)
    spec, buffer, filled = prepare(schedule, inputs)
    return {
        "kind": "schedule",
        "schedule": schedule,
        "n": schedule.n_ranks,
        "spec": spec,
        "what": f"schedule {schedule.name!r}",
        "buffer": buffer,
        "filled": filled,
        "n_segments": n_segments,
    }


def _job(item, index, n_segments=1):
    if isinstance(item, dict) and item.get("kind") in ("torch", "schedule"):
        return item  # a job torch_job or _schedule_job made (run's, with its fault)
    try:
        first, inputs, *rest = item
    except (TypeError, ValueError):
        raise CollectivesError(
            f"job {index}: expected (schedule, inputs) or (collective, inputs[, root]), got "
            f"{item!r:.80}"
        ) from None
    if isinstance(first, str):
        if len(rest) > 1:
            raise CollectivesError(f"job {index}: expected (collective, inputs[, root])")
        return torch_job(first, inputs, rest[0] if rest else None)
    if rest:
        raise CollectivesError(
            f"job {index}: expected (schedule, inputs); a schedule has its own root"
        )
    return _schedule_job(first, inputs, n_segments)


def _run_jobs(items, backend, timeout, n_segments=1):
    """Validate every job, then launch one process group per rank count; keep job order."""
    check_backend(backend)
    timeout = timeout_seconds(timeout)
    jobs = [_job(item, i, n_segments) for i, item in enumerate(items)]
    if not jobs:
        return []
    backend = resolve_backend(backend, max(j["n"] for j in jobs))
    for n in sorted({j["n"] for j in jobs}):
        check_launch(backend, n)
    results = [None] * len(jobs)
    for n in sorted({j["n"] for j in jobs}):
        indices = [i for i, j in enumerate(jobs) if j["n"] == n]
        tasks = [jobs[i] for i in indices]
        for i, (rows, op) in zip(indices, run_tasks(n, tasks, backend, timeout, indices)):
            job = jobs[i]
            if job["kind"] == "schedule":
                sched = job["schedule"]
                outputs = job["spec"].take_outputs(np.stack(rows), sched.groups, sched.n_chunks)
            else:
                outputs = np.stack(rows)
            results[i] = (outputs, op)
    return results


def run_many(jobs, backend="gloo", *, timeout=DEFAULT_TIMEOUT, n_segments=1, segments=None):
    """Run several jobs, starting the worker processes once per rank count.

    Each job is ``(schedule, inputs)`` (the schedule's transfers as point-to-point
    messages, as in :func:`run`) or ``(collective, inputs[, root])`` with a collective name
    (``torch.distributed``'s own implementation, as in :func:`run_torch`). All jobs are
    checked before any process starts. Jobs with the same number of ranks run one after
    the other in one process group. Returns the outputs in job order. ``timeout`` (seconds)
    bounds each launch: process start, process-group setup and all of its jobs.
    ``n_segments`` cuts every message of the schedules into that many pieces (as in
    :func:`run`; ``segments``: its old name, still accepted).
    """
    n_segments = check_segments(n_segments, segments)
    return [outputs for outputs, _ in _run_jobs(jobs, backend, timeout, n_segments)]


def check_fault(fault, schedule):
    """``fault`` (None, or ``{"rank", "step", "kind"}``: rank ``rank`` of ``schedule``, at the
    start of step ``step``, dies (``"die"``: the process exits), hangs (``"hang"``) or sends
    a message one row too long (``"mismatch"``)) as a dict, or a clear
    :class:`~collectives.CollectivesError`."""
    if fault is None:
        return None
    if not isinstance(fault, dict) or set(fault) != {"rank", "step", "kind"}:
        raise CollectivesError(
            f"fault must be a dict with keys 'rank', 'step' and 'kind', got {fault!r:.80}"
        )
    rank, step, kind = fault["rank"], fault["step"], fault["kind"]
    for name, value, top in (("rank", rank, schedule.n_ranks), ("step", step, schedule.n_steps)):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, np.integer))
            or not (0 <= value < top)
        ):
            raise CollectivesError(f"fault {name} must be one of 0..{top - 1}, got {value!r}")
    if kind not in FAULTS:
        raise CollectivesError(f"fault kind must be one of {', '.join(FAULTS)}, got {kind!r}")
    return {"rank": int(rank), "step": int(step), "kind": kind}


def run(
    schedule,
    inputs,
    backend="gloo",
    *,
    timeout=DEFAULT_TIMEOUT,
    n_segments=1,
    segments=None,
    fault=None,
):
    """Run ``schedule`` over ``torch.distributed`` with one local process per rank.

    ``inputs`` and the result are as in :func:`collectives.simulate` (one row per rank,
    NCCL's layouts) and the result equals ``simulate``'s exactly, same shape and dtype.
    Bad input raises the same :class:`~collectives.CollectivesError` as ``simulate``, and a
    schedule that reads an empty slot the same :class:`~collectives.ScheduleError`, before
    any process starts. A worker that fails raises :class:`DistError` naming its rank and
    its exception; ``timeout`` seconds (process start included) bound the whole run.
    Processes and the rendezvous port are always released. Timing is not realistic (see
    the module docstring): use :func:`collectives.time` for how long a schedule takes.
    ``n_segments`` (1 to 1024) sends every message in that many pieces, each combined into
    the buffer as soon as it arrives (pipelining, as gloo's own ring all-reduce does); the
    result does not change. ``segments`` is its old name, still accepted. ``fault`` injects
    a failure into one rank at one step (:func:`check_fault`), to see how a run ends: the
    :class:`DistError` names the rank and step, and its ``reached`` says where every rank
    was.
    """
    n_segments = check_segments(n_segments, segments)
    if fault is None:
        return run_many([(schedule, inputs)], backend, timeout=timeout, n_segments=n_segments)[0]
    job = _job((schedule, inputs), 0, n_segments)
    job["fault"] = check_fault(fault, job["schedule"])
    return run_many([job], backend, timeout=timeout, n_segments=n_segments)[0]


def run_torch(collective, inputs, *, root=None, backend="gloo", timeout=DEFAULT_TIMEOUT):
    """Run ``torch.distributed``'s own ``collective`` on ``inputs`` (one row per rank).

    Calls the function in :data:`TORCH_OPS` (e.g. ``all_gather_single``,
    ``reduce_scatter_single``, ``all_to_all_single``) with rank r's row as its tensor, and
    returns one output row per rank in the layout of :func:`collectives.simulate`. For
    ``reduce`` only the root's row is defined. ``root`` (default 0) is for ``broadcast``
    and ``reduce``. Gloo's collectives support fewer dtypes than its point-to-point
    messages (not int16 or uint16, for instance): such a run raises :class:`DistError`
    saying so.
    """
    return run_many([(collective, inputs, root)], backend, timeout=timeout)[0]


def compare_with_torch(
    schedule, inputs, *, backend="gloo", timeout=DEFAULT_TIMEOUT, n_segments=1, segments=None
):
    """Run ``schedule`` and ``torch.distributed``'s own collective on the same inputs.

    Both run in one process group (one launch). Returns a :class:`Comparison`; for a
    correct schedule and integer inputs ``comparison.equal`` is True: the package's
    Schedule computes what the library computes. ``n_segments`` (old name ``segments``) is
    :func:`run`'s.
    """
    n_segments = check_segments(n_segments, segments)
    schedule = schedule_arg(schedule)
    spec = collective_spec(schedule.collective)
    groups = None if schedule.n_groups == 1 else schedule.groups
    (ours, _), (theirs, op) = _run_jobs(
        [
            (schedule, inputs),
            torch_job(spec.name, inputs, schedule.root, op=schedule.op, groups=groups),
        ],
        backend,
        timeout,
        n_segments,
    )
    return compare(schedule, ours, theirs, op)


def device_mesh_groups(mesh, *, backend="gloo", timeout=DEFAULT_TIMEOUT):
    """The process groups torch's ``init_device_mesh`` makes for ``mesh`` (a
    :class:`collectives.Mesh`, or its axes as ``{"dp": 2, "tp": 4}``), built on one local
    process per position (CPU, gloo): ``{axis: groups}``, each an array of the groups along
    that axis (one row per group, its global ranks in order, the groups ordered by their
    first rank), as :meth:`collectives.Mesh.groups` returns them. torch numbers the
    positions row-major over the shape, the last axis fastest, as the package does."""
    from ..mesh import Mesh

    if not isinstance(mesh, Mesh):
        mesh = Mesh(mesh)
    names, shape = list(mesh.axis_names), [int(a) for a in mesh.shape]
    check_backend(backend)
    timeout = timeout_seconds(timeout)
    backend = resolve_backend(backend, mesh.n_ranks)
    check_launch(backend, mesh.n_ranks)
    task = {
        "kind": "mesh",
        "shape": shape,
        "names": names,
        "what": f"init_device_mesh of shape {tuple(shape)}",
    }
    ((rows, _),) = run_tasks(mesh.n_ranks, [task], backend, timeout)
    out = {}
    for name in names:
        groups = {tuple(row[name]) for row in rows}
        out[name] = np.array(sorted(groups), dtype=np.int64)
    return out
